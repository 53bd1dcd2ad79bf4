// The creation family: full (fill with a 0-d value), eye, arange and one_hot:
// results computed from attributes and scalars, written whole into the output (zeros first where only some elements are set).
#include <algorithm>
#include <cstring>
#include <string>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

Status eye_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef>,
                  std::span<TensorRef> out) {
  using namespace ops::attr;
  if (out.size() != 1 || attrs.values.size() < 4) return internal_error("eye: bad operands");
  TensorRef& o = out[0];
  const int64_t n = attrs.i(kEyeN), m = attrs.i(kEyeM), k = attrs.i(kEyeK);
  if (o.rank != 2 || o.shape[0] != n || o.shape[1] != m) return internal_error("eye: the result is " + describe(o));
  if (o.numel() > 0) std::memset(o.data, 0, o.nbytes());
  if (k >= m || k <= -n) return Status::Ok();  // the diagonal misses the matrix
  // Row i holds its one at column i + k; |k| < max(n, m) here, so nothing overflows.
  const int64_t first = k < 0 ? -k : 0, end = std::min(n, m - k);
  visit_dtype(o.dtype, [&](auto tag) {
    constexpr DType T = decltype(tag)::value;
    for (int64_t i = first; i < end; ++i) o.as<Storage<T>>()[i * m + i + k] = store<T>(1);
  });
  return Status::Ok();
}

int64_t int_scalar(const TensorRef& t) {
  return t.dtype == DType::kI32 ? int64_t(*t.as<int32_t>()) : *t.as<int64_t>();
}

// Element i is start + i * step: integers wrap like NumPy's, floats are computed
// in double (as the eager module does) and rounded once.
Status arange_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  if (in.size() < 3 || out.size() != 1) return internal_error("arange: wrong number of operands");
  TensorRef& o = out[0];
  const DType t = o.dtype;
  for (size_t i = 0; i < 3; ++i) {
    if (in[i].dtype != t || in[i].numel() != 1)
      return internal_error("arange: operand " + describe(in[i]) + " for a result " + describe(o));
  }
  if (o.rank != 1) return internal_error("arange: the result is " + describe(o));
  const int64_t n = o.shape[0];
  if (is_int(t)) {
    const int64_t start = int_scalar(in[0]), step = int_scalar(in[2]);
    if (step == 0) return runtime_error("arange: step cannot be zero");
    visit_dtype(t, [&](auto tag) {
      constexpr DType T = decltype(tag)::value;
      for (int64_t i = 0; i < n; ++i)
        o.as<Storage<T>>()[i] = store<T>(int64_t(uint64_t(start) + uint64_t(i) * uint64_t(step)));
    });
    return Status::Ok();
  }
  return visit_dtype(t, [&](auto tag) -> Status {
    constexpr DType T = decltype(tag)::value;
    if constexpr (is_float(T)) {
      const double start = load<T>(*in[0].as<Storage<T>>()), step = load<T>(*in[2].as<Storage<T>>());
      if (step == 0) return runtime_error("arange: step cannot be zero");
      for (int64_t i = 0; i < n; ++i) o.as<Storage<T>>()[i] = store<T>(start + double(i) * step);
      return Status::Ok();
    } else {
      return internal_error(std::string("arange: no kernel for ") + dtype_name(T));
    }
  });
}

Status one_hot_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("one_hot", in, 1, out));
  const TensorRef& idx = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("one_hot: missing attributes");
  const int64_t depth = attrs.i(ops::attr::kOneHotDepth);
  bool ok = is_int(idx.dtype) && o.rank == idx.rank + 1 && o.shape[idx.rank] == depth;
  for (int d = 0; ok && d < idx.rank; ++d) ok = o.shape[d] == idx.shape[d];
  if (!ok) return operand_mismatch("one_hot", idx, o);
  if (o.numel() > 0) std::memset(o.data, 0, o.nbytes());
  const int64_t count = idx.numel();
  visit_dtype(o.dtype, [&](auto tag) {
    constexpr DType T = decltype(tag)::value;
    for (int64_t p = 0; p < count; ++p) {
      const int64_t v = idx.dtype == DType::kI32 ? int64_t(idx.as<int32_t>()[p]) : idx.as<int64_t>()[p];
      if (v >= 0 && v < depth) o.as<Storage<T>>()[p * depth + v] = store<T>(1);
    }
  });
  return Status::Ok();
}

// full(value, dims...): the dims are only the output's shape, already applied.
Status full_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("full", in, 1, out));
  const TensorRef& v = in[0];
  TensorRef& o = out[0];
  if (v.numel() != 1 || v.dtype != o.dtype)
    return internal_error("full: the value must be a scalar of the result's dtype, got " + describe(v));
  const size_t elem = dtype_size(o.dtype);
  const int64_t n = o.numel();
  auto* dst = static_cast<uint8_t*>(o.data);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + size_t(i) * elem, v.data, elem);
  return Status::Ok();
}

}  // namespace

KernelFn creation_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Full: SG_RETURN_IF_SELECTED(Full, full_kernel);
    case ops::OpId::Eye: SG_RETURN_IF_SELECTED(Eye, eye_kernel);
    case ops::OpId::Arange: SG_RETURN_IF_SELECTED(Arange, arange_kernel);
    case ops::OpId::OneHot: SG_RETURN_IF_SELECTED(OneHot, one_hot_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
