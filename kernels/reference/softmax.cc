// softmax and log_softmax along one axis, the max subtracted first (SPEC §7).
#include <algorithm>
#include <cmath>
#include <string>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

template <bool kLog, DType In, DType Out>
void softmax_lanes(const TensorRef& x, TensorRef& o, const AxisView& v) {
  // f32 computes in float like NumPy's float32 loops; integer operands in double.
  using C = std::conditional_t<is_float(In), float, double>;
  const Storage<In>* px = x.as<Storage<In>>();
  Storage<Out>* po = o.as<Storage<Out>>();
  const int64_t n = v.n, s = v.inner;
  for (int64_t a = 0; a < v.outer; ++a) {
    for (int64_t b = 0; b < v.inner; ++b) {
      const Storage<In>* p = px + a * n * s + b;
      Storage<Out>* q = po + a * n * s + b;
      C mx = -INFINITY;
      for (int64_t i = 0; i < n; ++i) mx = std::max(mx, C(load<In>(p[i * s])));
      C sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::exp(C(load<In>(p[i * s])) - mx);
      if constexpr (kLog) {
        // (x - max) - log(sum), never x - (max + log(sum)): near a large max the
        // sum max + log(sum) would round away most of log(sum)'s digits.
        const C log_sum = std::log(sum);
        for (int64_t i = 0; i < n; ++i) q[i * s] = store<Out>((C(load<In>(p[i * s])) - mx) - log_sum);
      } else {
        const C inv = C(1) / sum;
        for (int64_t i = 0; i < n; ++i) q[i * s] = store<Out>(std::exp(C(load<In>(p[i * s])) - mx) * inv);
      }
    }
  }
}

template <bool kLog>
Status run_softmax(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  const char* name = kLog ? "log_softmax" : "softmax";
  SG_RETURN_IF_ERROR(check_arity(name, in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error(std::string(name) + ": missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis(name, x, axis));
  if (x.numel() != o.numel()) return operand_mismatch(name, x, o);
  const AxisView v = axis_view(x, int(axis));
  return visit_dtype(x.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      constexpr ops::OpId kOp = kLog ? ops::OpId::LogSoftmax : ops::OpId::Softmax;
      if constexpr (is_float(Out) && (In == Out || !is_float(In)) && selection::dtype_selected(kOp, In)) {
        softmax_lanes<kLog, In, Out>(x, o, v);
        return Status::Ok();
      } else {
        return unsupported_dtypes(kLog ? "log_softmax" : "softmax", In, Out);
      }
    });
  });
}

}  // namespace

KernelFn softmax_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Softmax: SG_RETURN_IF_SELECTED(Softmax, run_softmax<false>);
    case ops::OpId::LogSoftmax: SG_RETURN_IF_SELECTED(LogSoftmax, run_softmax<true>);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
