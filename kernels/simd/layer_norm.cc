// f32 layer_norm over the last axis (SPEC §7), which this XNNPACK lacks, with SIMD
// vectors (simd.h). As in the reference kernel and the eager module, the mean and
// the biased variance (two passes) accumulate in double, and each output is
// (x - mean) * inv * gamma + beta in double, rounded once to f32; only the order of
// the double sums differs, which moves a result by at most one f32 rounding in rare
// cases. Rows are split over the thread pool when there are many.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ops/op_table.h"
#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using simd::Isa;

// N float lanes and the double vector of the same lane count (spelled out: GCC
// drops vector_size on a type that depends on a template parameter).
template <int N> struct Lanes;
template <> struct Lanes<2> {
  using F = float __attribute__((vector_size(8)));
  using D = double __attribute__((vector_size(16)));
};
template <> struct Lanes<4> {
  using F = float __attribute__((vector_size(16)));
  using D = double __attribute__((vector_size(32)));
};
template <> struct Lanes<8> {
  using F = float __attribute__((vector_size(32)));
  using D = double __attribute__((vector_size(64)));
};

template <int N>
SG_SIMD_INLINE typename Lanes<N>::D load_d(const float* p) {
  typename Lanes<N>::F v;
  std::memcpy(&v, p, sizeof(v));
  return __builtin_convertvector(v, typename Lanes<N>::D);
}

template <int N>
SG_SIMD_INLINE double sum_lanes(typename Lanes<N>::D v) {
  double s = 0;
  for (int l = 0; l < N; ++l) s += v[l];
  return s;
}

struct Row {
  const float* x;
  const float* gamma;  // d values, or one repeated (step 0)
  const float* beta;
  float* y;
  size_t d;
  bool gamma_scalar, beta_scalar;
  double eps;
};

template <int N>
SG_SIMD_INLINE void normalize(const Row& r) {
  using D = typename Lanes<N>::D;
  using F = typename Lanes<N>::F;
  const size_t d = r.d;
  size_t i = 0;
  D acc = D{} + 0.0;
  for (; i + N <= d; i += N) acc += load_d<N>(r.x + i);
  double sum = sum_lanes<N>(acc);
  for (; i < d; ++i) sum += double(r.x[i]);
  const double mean = sum / double(d);
  acc = D{} + 0.0;
  i = 0;
  for (; i + N <= d; i += N) {
    const D c = load_d<N>(r.x + i) - mean;
    acc += c * c;
  }
  double var = sum_lanes<N>(acc);
  for (; i < d; ++i) {
    const double c = double(r.x[i]) - mean;
    var += c * c;
  }
  const double inv = 1.0 / std::sqrt(var / double(d) + r.eps);
  const D g1 = D{} + double(r.gamma[0]), b1 = D{} + double(r.beta[0]);
  i = 0;
  for (; i + N <= d; i += N) {
    const D g = r.gamma_scalar ? g1 : load_d<N>(r.gamma + i);
    const D b = r.beta_scalar ? b1 : load_d<N>(r.beta + i);
    const F out = __builtin_convertvector((load_d<N>(r.x + i) - mean) * inv * g + b, F);
    std::memcpy(r.y + i, &out, sizeof(out));
  }
  for (; i < d; ++i) {
    const double g = double(r.gamma[r.gamma_scalar ? 0 : i]), b = double(r.beta[r.beta_scalar ? 0 : i]);
    r.y[i] = float((double(r.x[i]) - mean) * inv * g + b);
  }
}

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 void normalize_avx512(const Row& r) { normalize<8>(r); }
SG_TARGET_AVX2 void normalize_avx2(const Row& r) { normalize<4>(r); }
#endif
void normalize_baseline(const Row& r) { normalize<2>(r); }

struct Task {
  Isa isa;
  Row first;  // row 0; row k is offset by k * d
};

void run_rows(void* arg, size_t begin, size_t count) {
  const Task& t = *static_cast<const Task*>(arg);
  for (size_t k = begin; k < begin + count; ++k) {
    Row r = t.first;
    r.x += k * r.d;
    r.y += k * r.d;
    switch (t.isa) {
#ifdef SG_SIMD_X86
      case Isa::kAvx512: normalize_avx512(r); break;
      case Isa::kAvx2: normalize_avx2(r); break;
#endif
      default: normalize_baseline(r); break;
    }
  }
}

class LayerNormKernel final : public PreparedKernel {
 public:
  explicit LayerNormKernel(ops::Attrs attrs) : attrs_(std::move(attrs)), isa_(simd::best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 3 || out.size() != 1) return internal_error("layer_norm: wrong operand count");
    const TensorRef &x = in[0], &gamma = in[1], &beta = in[2], &o = out[0];
    bool ok = x.rank >= 1 && is_f32(x) && is_f32(o) && o.numel() == x.numel();
    const int64_t d = ok ? x.shape[x.rank - 1] : 0;
    for (const TensorRef* p : {&gamma, &beta}) ok = ok && is_f32(*p) && (p->numel() == 1 || p->numel() == d);
    if (!ok)
      return internal_error("layer_norm: " + describe_shape(x) + " with " + describe_shape(gamma) + " and " +
                            describe_shape(beta) + " -> " + describe_shape(o));
    if (x.numel() == 0) return Status::Ok();
    Task task{isa_,
              Row{x.as<const float>(), gamma.as<const float>(), beta.as<const float>(), o.as<float>(), size_t(d),
                  gamma.numel() == 1 && d != 1, beta.numel() == 1 && d != 1, attrs_.f(ops::attr::kLayerNormEps)}};
    const size_t rows = size_t(x.numel() / d);
    // Rows per task: about 64k elements, enough to pay for a task.
    const size_t tile = std::max<size_t>(1, (size_t(1) << 16) / size_t(d));
    if (rows <= tile) run_rows(&task, 0, rows);
    else parallelize_tiles(ctx, run_rows, &task, rows, tile);
    return Status::Ok();
  }
  const char* name() const override { return "sg:layer_norm_f32"; }

 private:
  ops::Attrs attrs_;
  Isa isa_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_layer_norm(const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (in.size() != 3 || attrs.values.empty()) return nullptr;
  for (const InputInfo& i : in)
    if (!is_f32(i)) return nullptr;
  if (in[0].rank < 1) return nullptr;
  return std::make_unique<LayerNormKernel>(attrs);
}

}  // namespace sg::kernels::xnn
