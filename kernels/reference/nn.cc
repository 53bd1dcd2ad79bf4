// The neural-network kernels: softmax and log_softmax along one axis, the max
// subtracted first (SPEC §7); layer_norm over the last axis (SPEC §7):
// (x - mean) / sqrt(var + eps) * gamma + beta with the biased variance, computed
// in double like the eager module and rounded once to x's dtype. conv2d and the
// pools: nn_conv_pool.cc.
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

namespace {

template <DType T>
void normalize_rows(const TensorRef& x, const TensorRef& gamma, const TensorRef& beta, TensorRef& o, double eps) {
  const int64_t d = x.shape[x.rank - 1], rows = x.numel() / d;
  const Storage<T>* px = x.as<Storage<T>>();
  const Storage<T>* pg = gamma.as<Storage<T>>();
  const Storage<T>* pb = beta.as<Storage<T>>();
  Storage<T>* po = o.as<Storage<T>>();
  const int64_t sg = gamma.numel() == 1 ? 0 : 1, sb = beta.numel() == 1 ? 0 : 1;  // scalars repeat
  for (int64_t r = 0; r < rows; ++r) {
    const Storage<T>* row = px + r * d;
    double mean = 0;
    for (int64_t i = 0; i < d; ++i) mean += double(load<T>(row[i]));
    mean /= double(d);
    double var = 0;
    for (int64_t i = 0; i < d; ++i) {
      const double c = double(load<T>(row[i])) - mean;
      var += c * c;
    }
    var /= double(d);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i) {
      const double y = (double(load<T>(row[i])) - mean) * inv * double(load<T>(pg[i * sg])) +
                       double(load<T>(pb[i * sb]));
      po[r * d + i] = store<T>(y);
    }
  }
}

Status run_layer_norm(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("layer_norm", in, 3, out));
  const TensorRef &x = in[0], &gamma = in[1], &beta = in[2];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("layer_norm: missing attributes");
  bool ok = x.rank >= 1 && is_float(x.dtype) && o.dtype == x.dtype && o.numel() == x.numel();
  for (const TensorRef* p : {&gamma, &beta}) {
    ok = ok && p->dtype == x.dtype && (p->numel() == 1 || p->numel() == x.shape[x.rank - 1]);
  }
  if (!ok) {
    return internal_error("layer_norm: " + describe(x) + " with " + describe(gamma) + " and " + describe(beta) +
                          " -> " + describe(o));
  }
  if (x.numel() == 0) return Status::Ok();
  const double eps = attrs.f(ops::attr::kLayerNormEps);
  if (x.dtype == DType::kF16) normalize_rows<DType::kF16>(x, gamma, beta, o, eps);
  else normalize_rows<DType::kF32>(x, gamma, beta, o, eps);
  return Status::Ok();
}

}  // namespace

KernelFn layer_norm_kernel(ops::OpId op) { return op == ops::OpId::LayerNorm ? &run_layer_norm : nullptr; }

}  // namespace sg::kernels
