// Rules of the shape family: reshape, broadcast_to (a target shape that may name
// dynamic inputs), transpose, expand_dims, squeeze, concatenate, shape_dim, and
// tile and pad, where every dim grows by a static factor or amount given as an
// attribute (check_attrs bounds them), so symbolic dims stay exact ([N] tiled by
// 2 is [N*2], padded by (1, 2) is [N+3]).
#include <algorithm>

#include "ops/infer_rules.h"

namespace sg::ops::rules {

// infer_rules.h says what it gives; check_attrs has validated the entries.
template <class D>
Status resolve_target(const Rule<D>& r, std::vector<D>& dims, std::optional<size_t>& infer_pos) {
  const std::vector<int64_t>& spec = r.attrs.ints(attr::kShapeDims);
  size_t next_input = 1;
  int64_t static_elements = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == attr::kInferDim) {
      infer_pos = i;
      dims.push_back(D(1));
      continue;
    }
    D d = D(spec[i]);
    if (spec[i] == attr::kDynamicDim) {
      SG_ASSIGN_OR_RETURN(std::optional<D> value, dynamic_scalar(r, next_input++));
      if (value) {
        d = *value;
      } else {
        SG_ASSIGN_OR_RETURN(d, unknown_dim(r, "a dim given by a staged value"));
      }
    }
    if (std::optional<int64_t> s = dim_static(d)) {
      if (*s < 0) return r.error("dimension ", std::to_string(*s), " is negative");
      // Bad input must not overflow the element counts the rules compare.
      if (__builtin_mul_overflow(static_elements, *s, &static_elements)) {
        return r.error("shape ", r.fmt(dims), "... has too many elements");
      }
    }
    dims.push_back(std::move(d));
  }
  return Status::Ok();
}

template Status resolve_target<int64_t>(const Rule<int64_t>&, std::vector<int64_t>&, std::optional<size_t>&);
template Status resolve_target<SymDim>(const Rule<SymDim>&, std::vector<SymDim>&, std::optional<size_t>&);

namespace {

// SPEC §8: concatenate needs every dim but the axis equal across its inputs.
// Where dim_equal could not compare two (N*2 against 5), but no binding makes
// them equal, warn once for the node. Each input is compared with the distinct
// dims before it (the rule itself compares it with the running result only);
// usually there is one, so a long stack stays linear.
template <class D>
void warn_never_equal_non_axis([[maybe_unused]] const Rule<D>& r, [[maybe_unused]] size_t axis) {
  if constexpr (!kConcrete<D> && kRuleWarnings) {  // at run time every pair was compared, and is equal
    if (concrete(r)) return;
    for (size_t i = 0; i < r.in[0].rank(); ++i) {
      if (i == axis) continue;
      std::vector<size_t> distinct;  // inputs with a dim i unlike any before them
      for (size_t k = 0; k < r.in.size(); ++k) {
        const D& b = r.in[k].shape[i];
        bool seen = false;
        for (size_t j : distinct) {
          const D& a = r.in[j].shape[i];
          if (a == b) {
            seen = true;
            break;
          }
          if (!dim_never_equal(a, b)) continue;
          r.ctx.warn(std::string(r.name()) + ": inputs differ in dimension " + std::to_string(i) +
                     ", which is not the axis: " + r.fmt(r.in[j].shape) + " and " + r.fmt(r.in[k].shape) + ": " +
                     dim_text(r, a) + " and " + dim_text(r, b) + " cannot be equal" + fails_for_every_input(r, {a, b}));
          return;
        }
        if (!seen) distinct.push_back(k);
      }
    }
  }
}


// Static dims must keep their element count in int64 range: bad attributes must
// give an error, not an overflow.
template <class D>
Status check_element_count(const Rule<D>& r, const std::vector<D>& dims) {
  int64_t count = 1;
  for (const D& d : dims) {
    std::optional<int64_t> s = dim_static(d);
    if (s && __builtin_mul_overflow(count, *s, &count)) {
      return r.error("the result ", r.fmt(dims), " has too many elements");
    }
  }
  return Status::Ok();
}
}  // namespace

template <class D>
Status infer_reshape(const Rule<D>& r) {
  const std::vector<D>& shape = r.in[0].shape;
  std::vector<D> dims;
  std::optional<size_t> infer_pos;
  SG_RETURN_IF_ERROR(resolve_target(r, dims, infer_pos));
  const D total = dim_product(shape);
  const std::string from = r.fmt(shape) + " (" + dim_text(r, total) + " elements)";
  if (!infer_pos) {
    const D count = dim_product(dims);
    // Counts such as T*64 and T*128 agree only for an empty tensor: the target
    // is wrong for every input anyone means, so this is an error too.
    if (dim_equal(total, count) == Tri::kNo) {
      return r.error("cannot reshape ", from, " into ", r.fmt(dims), " (", dim_text(r, count), " elements)");
    }
    if (dim_equal_only_when_empty(total, count)) {
      return r.error("cannot reshape ", from, " into ", r.fmt(dims), " (", dim_text(r, count),
                     " elements): the counts agree only for an empty tensor");
    }
    // SPEC §8: counts that only the binding can compare, and that no binding makes equal.
    if (kRuleWarnings && dim_never_equal(total, count)) {
      r.ctx.warn(std::string(r.name()) + ": cannot reshape " + from + " into " + r.fmt(dims) + " (" +
                 dim_text(r, count) + " elements): the counts cannot be equal" +
                 fails_for_every_input(r, {total, count}));
    }
    r.set_output(r.in[0].dtype, std::move(dims));
    return Status::Ok();
  }
  const size_t pos = *infer_pos;
  std::vector<D> target = dims;  // as written, for messages
  target[pos] = D(-1);
  const D known = dim_product(dims);  // the -1 entry counts as 1
  if (is_static_value(known, 0)) {
    return r.error("cannot reshape ", from, " into ", r.fmt(target),
                   ": -1 is ambiguous when the other dims multiply to 0");
  }
  if (std::optional<D> q = dim_div_exact(total, known)) {
    dims[pos] = *q;
  } else if (dim_static(total) && dim_static(known)) {
    return r.error("cannot reshape ", from, " into ", r.fmt(target), ": ", dim_text(r, total), " is not a multiple of ",
                   dim_text(r, known));
  } else {
    // A symbolic total divided by a static factor that does not divide it: the
    // -1 swallows part of the batch dim, and the batch size changes silently.
    if (kRuleWarnings && dim_static(known)) {
      r.ctx.warn(std::string(r.name()) + ": -1 absorbs a factor that does not divide evenly: " + from +
                 " into " + r.fmt(target) + "; the batch dim changes silently (reshape batch contamination)");
    }
    SG_ASSIGN_OR_RETURN(dims[pos], unknown_dim(r, "the -1 of a reshape"));
  }
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_broadcast_to(const Rule<D>& r) {
  const std::vector<D>& shape = r.in[0].shape;
  std::vector<D> dims;
  std::optional<size_t> infer_pos;  // check_attrs allows no -1 here
  SG_RETURN_IF_ERROR(resolve_target(r, dims, infer_pos));
  auto mismatch = [&] { return r.error("cannot broadcast ", r.fmt(shape), " to ", r.fmt(dims)); };
  if (dims.size() < shape.size()) return mismatch();
  const size_t offset = dims.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (is_static_value(shape[i], 1)) continue;
    if (dim_equal(shape[i], dims[offset + i]) == Tri::kNo) return mismatch();
  }
  // SPEC §8: one warning per node, for the first dim no binding lets through.
  for (size_t i = 0; kRuleWarnings && i < shape.size(); ++i) {
    if (std::optional<std::string> why = never_one_or(r, shape[i], dims[offset + i])) {
      r.ctx.warn(std::string(r.name()) + ": cannot broadcast " + r.fmt(shape) + " to " + r.fmt(dims) + ": " + *why);
      break;
    }
  }
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_transpose(const Rule<D>& r) {
  const std::vector<int64_t>& perm = r.attrs.ints(attr::kPermAxes);  // a permutation (check_attrs)
  std::vector<D> dims;
  for (int64_t p : perm) dims.push_back(r.in[0].shape[size_t(p)]);
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_expand_dims(const Rule<D>& r) {
  const std::vector<int64_t>& axes = r.attrs.ints(attr::kAxesList);  // output axes, sorted
  const std::vector<D>& shape = r.in[0].shape;
  std::vector<D> dims;
  size_t next_axis = 0;
  size_t next_dim = 0;
  for (size_t i = 0; i < shape.size() + axes.size(); ++i) {
    if (next_axis < axes.size() && size_t(axes[next_axis]) == i) {
      dims.push_back(D(1));
      ++next_axis;
    } else {
      dims.push_back(shape[next_dim++]);
    }
  }
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_squeeze(const Rule<D>& r) {
  const std::vector<int64_t>& axes = r.attrs.ints(attr::kAxesList);  // input axes, sorted
  const std::vector<D>& shape = r.in[0].shape;
  std::vector<D> dims;
  size_t next_axis = 0;
  bool warned = false;  // one warning per node
  for (size_t i = 0; i < shape.size(); ++i) {
    if (next_axis < axes.size() && size_t(axes[next_axis]) == i) {
      ++next_axis;
      if (dim_equal(shape[i], D(1)) == Tri::kNo) {
        return r.error("cannot squeeze axis ", std::to_string(i), " of ", r.fmt(shape), ": its size is ",
                       dim_text(r, shape[i]), ", not 1");
      }
      if (kRuleWarnings && !warned && dim_never_equal(shape[i], D(1))) {  // a symbolic size such as N*2
        r.ctx.warn(std::string(r.name()) + ": cannot squeeze axis " + std::to_string(i) + " of " + r.fmt(shape) +
                   ": its size " + dim_text(r, shape[i]) + " cannot be 1" + fails_for_every_input(r, {shape[i]}));
        warned = true;
      }
      continue;
    }
    dims.push_back(shape[i]);
  }
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_concatenate(const Rule<D>& r) {
  const size_t axis = size_t(r.attrs.i(attr::kAxisValue));
  const TensorType<D>& first = r.in[0];
  std::vector<D> dims = first.shape;
  for (size_t k = 1; k < r.in.size(); ++k) {
    const TensorType<D>& t = r.in[k];
    if (t.dtype != first.dtype) {
      return r.error("inputs have different dtypes ", dtype_name(first.dtype), " and ", dtype_name(t.dtype),
                     "; cast one with astype");
    }
    if (t.rank() != first.rank()) {
      return r.error("inputs have different ranks: ", r.fmt(first.shape), " and ", r.fmt(t.shape));
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i == axis) {
        dims[i] = dims[i] + t.shape[i];
        continue;
      }
      const Tri eq = dim_equal(dims[i], t.shape[i]);
      if (eq == Tri::kNo) {
        return r.error("inputs differ in dimension ", std::to_string(i), ", which is not the axis: ",
                       r.fmt(first.shape), " and ", r.fmt(t.shape));
      }
      if (eq == Tri::kUnknown && dim_static(t.shape[i])) dims[i] = t.shape[i];
    }
  }
  warn_never_equal_non_axis(r, axis);
  r.set_output(first.dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_shape_dim(const Rule<D>& r) {
  r.set_output(DType::kI64, {});
  return Status::Ok();
}

template <class D>
Status infer_tile(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const std::vector<int64_t>& reps = r.attrs.ints(attr::kTileReps);
  const size_t rank = std::max(x.rank(), reps.size());
  std::vector<D> dims;
  for (size_t i = 0; i < rank; ++i) {
    const size_t from_right = rank - 1 - i;  // NumPy aligns shape and reps at the right
    const D d = from_right < x.rank() ? x.shape[x.rank() - 1 - from_right] : D(1);
    const int64_t rep = from_right < reps.size() ? reps[reps.size() - 1 - from_right] : 1;
    if (std::optional<int64_t> s = dim_static(d)) {
      int64_t product = 0;
      if (__builtin_mul_overflow(*s, rep, &product)) return r.error("tiling ", r.fmt(x.shape), " overflows");
      dims.push_back(D(product));
    } else {
      dims.push_back(d * D(rep));
    }
  }
  SG_RETURN_IF_ERROR(check_element_count(r, dims));
  r.set_output(x.dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_pad(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const std::vector<int64_t>& pads = r.attrs.ints(attr::kPadWidths);  // 2 per axis
  std::vector<D> dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    const int64_t extra = pads[2 * i] + pads[2 * i + 1];  // each <= 2^31 - 1
    if (std::optional<int64_t> s = dim_static(x.shape[i])) {
      int64_t sum = 0;
      if (__builtin_add_overflow(*s, extra, &sum)) return r.error("padding ", r.fmt(x.shape), " overflows");
      dims.push_back(D(sum));
    } else {
      dims.push_back(x.shape[i] + D(extra));
    }
  }
  SG_RETURN_IF_ERROR(check_element_count(r, dims));
  r.set_output(x.dtype, std::move(dims));
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_reshape)
SG_INSTANTIATE_RULE(infer_broadcast_to)
SG_INSTANTIATE_RULE(infer_transpose)
SG_INSTANTIATE_RULE(infer_expand_dims)
SG_INSTANTIATE_RULE(infer_squeeze)
SG_INSTANTIATE_RULE(infer_concatenate)
SG_INSTANTIATE_RULE(infer_shape_dim)
SG_INSTANTIATE_RULE(infer_tile)
SG_INSTANTIATE_RULE(infer_pad)

}  // namespace sg::ops::rules
