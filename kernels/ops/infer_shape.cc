// Rules of the shape ops: reshape, broadcast_to, full (a target shape that may
// name dynamic inputs), transpose, expand_dims, squeeze, concatenate, take,
// shape_dim.
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

// The target shape of reshape/broadcast_to/full: entries >= 0 as given, -2 from
// the dynamic scalar inputs 1, 2, ... in order, -1 left as a marker whose
// position is returned in `infer_pos`. check_attrs has validated the entries.
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
Status infer_full(const Rule<D>& r) {
  if (r.in[0].rank() != 0) return r.error("the fill value must be a scalar, got ", r.fmt(r.in[0].shape));
  std::vector<D> dims;
  std::optional<size_t> infer_pos;
  SG_RETURN_IF_ERROR(resolve_target(r, dims, infer_pos));
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

// random(key, dims...): the key is an i64[2] (two 32-bit words); the result is the
// target shape (+ [2] for keys), i64 for bits and keys, f32 for the distributions.
template <class D>
Status infer_random(const Rule<D>& r) {
  const TensorType<D>& key = r.in[0];
  if (key.dtype != DType::kI64 || key.rank() != 1 || dim_static(key.shape[0]) != std::optional<int64_t>(2))
    return r.error("the key must be an i64[2] tensor (sg.random.key), got ", dtype_name(key.dtype), r.fmt(key.shape));
  std::vector<D> dims;
  std::optional<size_t> infer_pos;
  SG_RETURN_IF_ERROR(resolve_target(r, dims, infer_pos));
  const int64_t dist = r.attrs.i(attr::kRandomDistribution);
  if (dist == attr::kKeys) dims.push_back(D(2));
  r.set_output(dist == attr::kKeys || dist == attr::kBits ? DType::kI64 : DType::kF32, std::move(dims));
  return Status::Ok();
}

// custom(operands..., dims...): the dtype and shape the compiler recorded; the
// dynamic dims are the inputs after the operands.
template <class D>
Status infer_custom(const Rule<D>& r) {
  size_t next_input = size_t(r.attrs.i(attr::kCustomOperands));
  std::vector<D> dims;
  for (int64_t entry : r.attrs.ints(attr::kCustomShape)) {
    if (entry != attr::kDynamicDim) {
      dims.push_back(D(entry));
      continue;
    }
    SG_ASSIGN_OR_RETURN(std::optional<D> value, dynamic_scalar(r, next_input++));
    D d = D(0);
    if (value) {
      d = *value;
    } else {
      SG_ASSIGN_OR_RETURN(d, unknown_dim(r, "a dim given by a staged value"));
    }
    if (std::optional<int64_t> s = dim_static(d); s && *s < 0)
      return r.error("dimension ", std::to_string(*s), " is negative");
    dims.push_back(std::move(d));
  }
  r.set_output(DType(r.attrs.i(attr::kCustomDType)), std::move(dims));
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

template <class D>
Status infer_shape_dim(const Rule<D>& r) {
  r.set_output(DType::kI64, {});
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_reshape)
SG_INSTANTIATE_RULE(infer_broadcast_to)
SG_INSTANTIATE_RULE(infer_full)
SG_INSTANTIATE_RULE(infer_random)
SG_INSTANTIATE_RULE(infer_custom)
SG_INSTANTIATE_RULE(infer_transpose)
SG_INSTANTIATE_RULE(infer_expand_dims)
SG_INSTANTIATE_RULE(infer_squeeze)
SG_INSTANTIATE_RULE(infer_concatenate)
SG_INSTANTIATE_RULE(infer_take)
SG_INSTANTIATE_RULE(infer_scatter_add)
SG_INSTANTIATE_RULE(infer_shape_dim)

}  // namespace sg::ops::rules
