// Rules of the indexing family: slice, slice_update, take, scatter_add, and the
// ops that item assignment and boolean selection lower to: scatter (x[idx] = v)
// and flat_nonzero (x[mask], sg.nonzero), whose length is a dim known only when
// it runs.
//
// The slice rule: basic indexing and slicing, one (begin, end, step, flags) entry
// per input axis (see op_table.h, attr::Slice). Static bounds on static
// dims follow NumPy's clamping exactly. With a symbolic dim or a bound tied to a
// symbolic dim, the length is computed assuming the bounds lie inside the axis
// (x[1:] of [N] is [N-1], x[-1:] is [1]); what cannot be expressed becomes a
// fresh dim. So does a static length above 1 of a symbolic axis: x[:512] of [N]
// has min(N, 512) elements, which only the run knows (typed [512], its .size and
// .shape would be wrong constants whenever N < 512). At run time everything is
// concrete and the exact rule applies.
// slice_update selects its region the same way.
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

// PySlice_AdjustIndices: the number of elements of x[b:e:step] on an axis of size n.
int64_t static_slice_length(int64_t n, std::optional<int64_t> b, std::optional<int64_t> e, int64_t step) {
  auto adjust = [&](int64_t v) {
    if (v < 0) {
      v += n;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
    return v;
  };
  const int64_t start = b ? adjust(*b) : (step < 0 ? n - 1 : 0);
  const int64_t stop = e ? adjust(*e) : (step < 0 ? -1 : n);
  if (step < 0) return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

// One bound of one axis: not given (NumPy's default), a known value, or a staged
// value the compiler does not know.
template <class D>
struct Bound {
  bool given = false;
  std::optional<D> value;  // set when given and known
};

template <class D>
Result<Bound<D>> read_bound(const Rule<D>& r, bool has, bool dynamic, int64_t literal, size_t& next_input) {
  Bound<D> bound;
  if (dynamic) {
    bound.given = true;
    SG_ASSIGN_OR_RETURN(bound.value, dynamic_scalar(r, next_input++));
  } else if (has) {
    bound.given = true;
    bound.value = D(literal);
  }
  return bound;
}

template <class D>
std::optional<int64_t> static_bound(const Bound<D>& b) {
  return b.value ? dim_static(*b.value) : std::nullopt;
}

// The length when the dim or a bound is symbolic (compile time only).
template <class D>
Result<D> symbolic_slice_length(const Rule<D>& r, const D& n, const Bound<D>& b, const Bound<D>& e,
                                int64_t step) {
  if ((b.given && !b.value) || (e.given && !e.value)) return unknown_dim(r, "a slice with a staged bound");
  // Index from the start of the axis; a symbolic bound is taken as such an index.
  auto position = [&](const D& v) -> D {
    std::optional<int64_t> s = dim_static(v);
    return (s && *s < 0) ? n + v : v;
  };
  const D start = b.given ? position(*b.value) : (step < 0 ? n - D(1) : D(0));
  const D stop = e.given ? position(*e.value) : (step < 0 ? D(-1) : n);
  const D span = step < 0 ? start - stop : stop - start;
  const int64_t stride = step < 0 ? -step : step;
  if (std::optional<int64_t> s = dim_static(span)) {
    const int64_t len = *s <= 0 ? 0 : (*s - 1) / stride + 1;
    if (len > 1 && !dim_static(n))
      return unknown_dim(r, "a slice of up to " + std::to_string(len) + " elements of a symbolic dim");
    return D(len);
  }
  if (std::optional<D> q = dim_div_exact(span, D(stride))) return *q;
  if (std::optional<D> q = dim_div_exact(span + D(stride - 1), D(stride))) return *q;
  return unknown_dim(r, "the length of a strided slice of a symbolic dim");
}

// The shape of x[...] selected by the slice attributes; dynamic bounds are the
// inputs from `first_dynamic` on, for each axis in order begin then end.
template <class D>
Result<std::vector<D>> slice_region(const Rule<D>& r, size_t first_dynamic) {
  const std::vector<D>& shape = r.in[0].shape;
  const std::vector<int64_t>& begin = r.attrs.ints(attr::kSliceBegin);
  const std::vector<int64_t>& end = r.attrs.ints(attr::kSliceEnd);
  const std::vector<int64_t>& step = r.attrs.ints(attr::kSliceStep);
  const std::vector<int64_t>& flags = r.attrs.ints(attr::kSliceFlags);
  size_t next_input = first_dynamic;
  std::vector<D> dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t f = flags[i];
    SG_ASSIGN_OR_RETURN(Bound<D> b, read_bound(r, (f & (attr::kHasBegin | attr::kIndex)) != 0,
                                               (f & attr::kDynBegin) != 0, begin[i], next_input));
    SG_ASSIGN_OR_RETURN(Bound<D> e, read_bound(r, (f & attr::kHasEnd) != 0, (f & attr::kDynEnd) != 0,
                                               end[i], next_input));
    const std::optional<int64_t> n = dim_static(shape[i]);
    if (f & attr::kIndex) {
      const std::optional<int64_t> idx = static_bound(b);
      if (n && idx && (*idx < -*n || *idx >= *n)) {
        return r.error("index ", std::to_string(*idx), " is out of bounds for axis ", std::to_string(i), " with size ",
                       std::to_string(*n));
      }
      continue;  // an index drops the axis
    }
    const bool all_static = n && (!b.given || static_bound(b)) && (!e.given || static_bound(e));
    if (all_static) {
      dims.push_back(D(static_slice_length(*n, static_bound(b), static_bound(e), step[i])));
      continue;
    }
    SG_ASSIGN_OR_RETURN(D len, symbolic_slice_length(r, shape[i], b, e, step[i]));
    dims.push_back(std::move(len));
  }
  return dims;
}

}  // namespace

template <class D>
Status infer_slice(const Rule<D>& r) {
  SG_ASSIGN_OR_RETURN(std::vector<D> dims, slice_region(r, 1));
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

// x[slice] = v: v broadcasts to the selected region, as NumPy's item assignment
// (leading size-1 dims of v beyond the region's rank are allowed too).
template <class D>
Status infer_slice_update(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& v = r.in[1];
  if (v.dtype != x.dtype) {
    return r.error("the value is ", dtype_name(v.dtype), " but the tensor is ", dtype_name(x.dtype),
                   "; cast with astype");
  }
  SG_ASSIGN_OR_RETURN(std::vector<D> region, slice_region(r, 2));
  const size_t lead = v.rank() > region.size() ? v.rank() - region.size() : 0;
  bool fits = true;
  for (size_t i = 0; i < v.rank() && fits; ++i) {
    const D& d = v.shape[i];
    if (is_static_value(d, 1)) continue;
    if (i < lead) {
      fits = dim_equal(d, D(1)) != Tri::kNo;
    } else {
      fits = dim_equal(d, region[region.size() - (v.rank() - i)]) != Tri::kNo;
    }
  }
  const auto mismatch = [&] {
    return "cannot broadcast a value of shape " + r.fmt(v.shape) + " into the selected region " + r.fmt(region) +
           " of " + r.fmt(x.shape);
  };
  if (!fits) return r.error(mismatch());
  // SPEC §8: one warning per node, for the first dim of v no binding lets through.
  for (size_t i = 0; kRuleWarnings && i < v.rank(); ++i) {
    const D& d = v.shape[i];
    std::optional<std::string> why;
    if (i < lead) {
      if (dim_equal(d, D(1)) == Tri::kUnknown && dim_never_equal(d, D(1)))
        why = dim_text(r, d) + " cannot be 1" + fails_for_every_input(r, {d});
    } else {
      why = never_one_or(r, d, region[region.size() - (v.rank() - i)]);
    }
    if (why) {
      r.ctx.warn(std::string(r.name()) + ": " + mismatch() + ": " + *why);
      break;
    }
  }
  r.set_output(x.dtype, x.shape);
  return Status::Ok();
}

// scatter(x, idx, updates): x's type; updates have take's layout
// x.shape[:axis] + idx.shape + x.shape[axis+1:] (the compiler broadcasts them).
template <class D>
Status infer_scatter(const Rule<D>& r) {
  const size_t axis = size_t(r.attrs.i(attr::kAxisValue));
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& idx = r.in[1];
  const TensorType<D>& upd = r.in[2];
  if (!is_int(idx.dtype)) return r.error("indices must be i32 or i64, got ", dtype_name(idx.dtype));
  if (upd.dtype != x.dtype)
    return r.error("updates are ", dtype_name(upd.dtype), ", the target ", dtype_name(x.dtype));
  std::vector<D> dims(x.shape.begin(), x.shape.begin() + ptrdiff_t(axis));
  dims.insert(dims.end(), idx.shape.begin(), idx.shape.end());
  dims.insert(dims.end(), x.shape.begin() + ptrdiff_t(axis) + 1, x.shape.end());
  if (dims.size() != upd.shape.size())
    return r.error("updates ", r.fmt(upd.shape), " do not have the indexed shape ", r.fmt(dims));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dim_equal(dims[i], upd.shape[i]) == Tri::kNo)
      return r.error("updates ", r.fmt(upd.shape), " do not have the indexed shape ", r.fmt(dims));
  r.set_output(x.dtype, x.shape);
  return Status::Ok();
}

// flat_nonzero(x) -> i64[count]: count is what the kernel reported, or at compile
// time a fresh dim ("nonzero count"); before the kernel ran (the planner) the rule
// fails, so the value is made when the node runs.
template <class D>
Status infer_flat_nonzero(const Rule<D>& r) {
  std::optional<D> count = r.ctx.reported_dim(0);
  if (!count) {
    if (concrete(r)) return r.error("its length is known only when it runs");
    count = r.ctx.fresh_dim("the number of nonzero elements, known only when it runs");
  }
  r.set_output(DType::kI64, {*count});
  return Status::Ok();
}

template <class D>
Status infer_take(const Rule<D>& r) {
  const size_t axis = size_t(r.attrs.i(attr::kAxisValue));
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& idx = r.in[1];
  if (!is_int(idx.dtype)) return r.error("indices must be i32 or i64, got ", dtype_name(idx.dtype));
  std::vector<D> dims(x.shape.begin(), x.shape.begin() + ptrdiff_t(axis));
  dims.insert(dims.end(), idx.shape.begin(), idx.shape.end());
  dims.insert(dims.end(), x.shape.begin() + ptrdiff_t(axis) + 1, x.shape.end());
  r.set_output(x.dtype, std::move(dims));
  return Status::Ok();
}

// scatter_add(x, idx, updates): x's type; updates must have take's result shape.
template <class D>
Status infer_scatter_add(const Rule<D>& r) {
  const size_t axis = size_t(r.attrs.i(attr::kAxisValue));
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& idx = r.in[1];
  const TensorType<D>& upd = r.in[2];
  if (!is_int(idx.dtype)) return r.error("indices must be i32 or i64, got ", dtype_name(idx.dtype));
  if (x.dtype != DType::kF32) return r.error("the target must be f32, got ", dtype_name(x.dtype));
  if (upd.dtype != x.dtype)
    return r.error("updates are ", dtype_name(upd.dtype), ", the target ", dtype_name(x.dtype));
  std::vector<D> dims(x.shape.begin(), x.shape.begin() + ptrdiff_t(axis));
  dims.insert(dims.end(), idx.shape.begin(), idx.shape.end());
  dims.insert(dims.end(), x.shape.begin() + ptrdiff_t(axis) + 1, x.shape.end());
  if (dims.size() != upd.shape.size())
    return r.error("updates ", r.fmt(upd.shape), " do not have the gathered shape ", r.fmt(dims));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dim_static(dims[i]) && dim_static(upd.shape[i]) && *dim_static(dims[i]) != *dim_static(upd.shape[i]))
      return r.error("updates ", r.fmt(upd.shape), " do not have the gathered shape ", r.fmt(dims));
  r.set_output(x.dtype, x.shape);
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_slice)
SG_INSTANTIATE_RULE(infer_slice_update)
SG_INSTANTIATE_RULE(infer_scatter)
SG_INSTANTIATE_RULE(infer_flat_nonzero)
SG_INSTANTIATE_RULE(infer_take)
SG_INSTANTIATE_RULE(infer_scatter_add)

}  // namespace sg::ops::rules
