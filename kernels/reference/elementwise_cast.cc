// cast (astype), of the elementwise family.
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

}  // namespace

KernelFn cast_op_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Cast: SG_RETURN_IF_SELECTED(Cast, cast_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
