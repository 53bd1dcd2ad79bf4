// layer_norm over the last axis (SPEC §7): (x - mean) / sqrt(var + eps) * gamma +
// beta with the biased variance, computed in double like the eager module and
// rounded once to x's dtype.
#include <cmath>
#include <string>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"

namespace sg::kernels {
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
