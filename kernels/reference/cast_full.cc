// cast (astype), full (fill with a 0-d value) and shape_dim (one dim as an i64 scalar).
#include <cstring>
#include <string>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

// Float -> int truncates toward zero (NaN -> 0, out of range saturates); any -> bool
// is != 0. Integers reach f16 through float: any integer that float would round
// is already past f16's range, so that is one rounding too.
Status cast_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("cast", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  const int64_t n = o.numel();
  if (x.numel() != n) return operand_mismatch("cast", x, o);
  if (x.dtype == o.dtype) {
    copy_elements(o.data, x.data, n, dtype_size(x.dtype));
    return Status::Ok();
  }
  // The loops are built for the selected operand dtypes only (selected_ops.h).
  return visit_dtype(x.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (selection::dtype_selected(ops::OpId::Cast, In)) {
        const Storage<In>* px = x.as<Storage<In>>();
        Storage<Out>* po = o.as<Storage<Out>>();
        for (int64_t i = 0; i < n; ++i) po[i] = store<Out>(load<In>(px[i]));
        return Status::Ok();
      } else {
        return unsupported_dtypes("cast", In, Out);
      }
    });
  });
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

Status shape_dim_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                        std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("shape_dim", in, 1, out));
  if (attrs.values.empty()) return internal_error("shape_dim: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("shape_dim", in[0], axis));
  if (out[0].dtype != DType::kI64 || out[0].numel() != 1)
    return internal_error("shape_dim: the result must be an i64 scalar, got " + describe(out[0]));
  *out[0].as<int64_t>() = in[0].shape[axis];
  return Status::Ok();
}

}  // namespace

KernelFn cast_full_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Cast: SG_RETURN_IF_SELECTED(Cast, cast_kernel);
    case ops::OpId::Full: SG_RETURN_IF_SELECTED(Full, full_kernel);
    case ops::OpId::ShapeDim: SG_RETURN_IF_SELECTED(ShapeDim, shape_dim_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
