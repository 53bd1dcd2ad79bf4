// f32 tanh and gelu, which this XNNPACK lacks, and relu, whose XNNPACK clamp
// turns NaN into 0: evaluated with SIMD vectors (simd.h), split into tiles over
// the thread pool.
//   tanh(x): odd/even polynomial ratio on x clamped to +-7.905, x itself below
//            4e-4, +-1 from |x| >= 9.0109 on; max relative error ~3e-7.
//   gelu(x) = 0.5*x*(1 + erf(x/sqrt(2))) (exact form, SPEC §7), computed as
//            0.5*x*erfc(-x/sqrt(2)) to keep the negative tail accurate; max relative
//            error ~5e-7.

#include <cmath>
#include <cstring>

#include "simd/simd.h"
#include "simd/simd_kernels.h"

#ifdef SG_SIMD_X86
#include <immintrin.h>
#endif

namespace sg::kernels::xnn {
namespace {

using namespace simd;

struct Tanh {
  template <class V>
  SG_SIMD_INLINE V operator()(V x) const {
    const V xc = clamp(x, splat<V>(-7.90531110763549805f), splat<V>(7.90531110763549805f));
    const V x2 = xc * xc;
    V p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
    p = p * x2 + -8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    p = p * xc;
    V q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    const V ax = x < splat<V>(0.0f) ? -x : x;
    // From 9.0109 (13 ln 2) on, tanh is within half an ulp of 1: exactly +-1, as
    // NumPy gives it; the ratio at the clamp is 0.99999976.
    const V one = x < splat<V>(0.0f) ? splat<V>(-1.0f) : splat<V>(1.0f);
    return ax < splat<V>(4e-4f) ? x : ax >= splat<V>(9.01091334f) ? one : p / q;
  }
};

// e^x for x in [-87, 88] (callers clamp): x = n*ln2 + r with |r| <= ln2/2, e^r by
// Cephes' degree-6 polynomial (~1 ulp), 2^n built in the exponent bits. n is
// rounded by adding 1.5*2^23, whose low mantissa bits then hold n.
template <class V>
SG_SIMD_INLINE V exp_v(V x) {
  using I = IntOf<V>;
  const V magic = splat<V>(12582912.0f);
  const V t = x * 1.44269504088896341f + magic;
  const V n = t - magic;
  V r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const V e = p * r * r + r + 1.0f;
  const I two_n = (bit_cast<I>(t) - bit_cast<I>(magic) + 127) << 23;
  return e * bit_cast<V>(two_n);
}

// gelu(x) = 0.5*x*erfc(-x/sqrt(2)): erfc of t = |x|/sqrt(2) by Numerical Recipes'
// Chebyshev fit u*exp(-t^2 + P(u)), u = 1/(1 + t/2), relative error < 1.2e-7 for
// every t >= 0, and erfc(-t) = 2 - erfc(t). Forming 1 + erf instead would lose all
// precision in the negative tail, where it nearly cancels.
struct Gelu {
  template <class V>
  SG_SIMD_INLINE V operator()(V x) const {
    const V z = x * 0.70710678118654752440f;
    const V t = z < splat<V>(0.0f) ? -z : z;
    const V u = splat<V>(1.0f) / (t * 0.5f + 1.0f);
    V p = u * 0.17087277f + -0.82215223f;
    p = p * u + 1.48851587f;
    p = p * u + -1.13520398f;
    p = p * u + 0.27886807f;
    p = p * u + -0.18628806f;
    p = p * u + 0.09678418f;
    p = p * u + 0.37409196f;
    p = p * u + 1.00002368f;
    p = p * u + -1.26551223f;
    // exp(-t^2) = exp(-x^2/2) as exp(-xh^2/2) * exp(-(x - xh)(x + xh)/2), xh = x
    // with 12 low mantissa bits cleared so that xh^2 is exact: t^2 from a rounded
    // t would cost up to 5e-6 relative in the tail. Infinite x: the tail factor is
    // 0 instead of inf - inf.
    const V xh = bit_cast<V>(bit_cast<IntOf<V>>(x) & int32_t(-4096));
    const V tail = (x - xh) * (x + xh);
    const V lo = splat<V>(-87.0f), hi = splat<V>(88.0f);
    const V erfc_t = u * exp_v(clamp((xh * xh) * -0.5f, lo, hi)) *
                     exp_v(clamp((tail == tail ? tail : splat<V>(0.0f)) * -0.5f + p, lo, hi));
    const V w = z < splat<V>(0.0f) ? erfc_t : splat<V>(2.0f) - erfc_t;
    return (x * 0.5f) * w;
  }
};

// max(x, 0) with NumPy's NaN propagation (XNNPACK's clamp turns NaN into 0).
struct Relu {
  template <class V>
  SG_SIMD_INLINE V operator()(V x) const {
    return x < splat<V>(0.0f) ? splat<V>(0.0f) : x;
  }
};

// y[i] = f(x[i]) for i < n: full vectors, then the tail as one vector through a
// zero-padded copy, so that every element is the vector code's result wherever it
// lies (scalar code contracts and rounds differently: tanh of one value gave
// 0.99999976 in a vector and 1.0 in the tail). F is a functor with an
// always-inline operator(), never a lambda: a lambda would be compiled for the
// baseline ISA and called with wide vectors across a mismatched ABI.
template <class V, class F>
SG_SIMD_INLINE void map(const float* x, float* y, size_t n, F f) {
  constexpr size_t L = size_t(kLanes<V>);
  size_t i = 0;
  for (; i + L <= n; i += L) store<V>(y + i, f(load<V>(x + i)));
  if (i < n) {
    float tail[L] = {};
    std::memcpy(tail, x + i, (n - i) * sizeof(float));
    store<V>(tail, f(load<V>(tail)));
    std::memcpy(y + i, tail, (n - i) * sizeof(float));
  }
}

enum class Fn { kTanh, kGelu, kRelu };

template <class V>
SG_SIMD_INLINE void map_fn(Fn fn, const float* x, float* y, size_t n) {
  switch (fn) {
    case Fn::kTanh: return map<V>(x, y, n, Tanh{});
    case Fn::kGelu: return map<V>(x, y, n, Gelu{});
    case Fn::kRelu: return map<V>(x, y, n, Relu{});
  }
}

// One op's row on one instruction set, as a plain function pointer: what the
// kernels below split into tiles, and what an elementwise chain runs per block.
#ifdef SG_SIMD_X86
template <Fn F>
SG_TARGET_AVX512 void row_avx512(const float* x, float* y, size_t n) {
  map_fn<V16>(F, x, y, n);
}
template <Fn F>
SG_TARGET_AVX2 void row_avx2(const float* x, float* y, size_t n) {
  map_fn<V8>(F, x, y, n);
}
#endif
template <Fn F>
void row_baseline(const float* x, float* y, size_t n) {
  map_fn<V4>(F, x, y, n);
}

template <Fn F>
UnaryRowFn row_for(Isa isa) {
  switch (isa) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: return &row_avx512<F>;
    case Isa::kAvx2: return &row_avx2<F>;
#endif
    default: return &row_baseline<F>;
  }
}

UnaryRowFn row_of(Fn fn, Isa isa) {
  switch (fn) {
    case Fn::kTanh: return row_for<Fn::kTanh>(isa);
    case Fn::kGelu: return row_for<Fn::kGelu>(isa);
    case Fn::kRelu: return row_for<Fn::kRelu>(isa);
  }
  return nullptr;
}

// sqrt, correctly rounded on every path (the vector instruction and std::sqrt
// alike), so a chain's sqrt step has the sqrt kernel's bits: a row for chains.
// AVX-512 machines take the AVX2 row (a chain's sqrt is bound by memory).
#ifdef SG_SIMD_X86
SG_TARGET_AVX2 void sqrt_avx2(const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = std::sqrt(x[i]);
}
#endif
void sqrt_baseline(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
}

UnaryRowFn sqrt_row(Isa isa) {
  switch (isa) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512:
    case Isa::kAvx2: return &sqrt_avx2;
#endif
    default: return &sqrt_baseline;
  }
}

struct MapTask {
  UnaryRowFn row;
  const float* x;
  float* y;
};

void run_tile(void* arg, size_t start, size_t count) {
  const MapTask& t = *static_cast<const MapTask*>(arg);
  t.row(t.x + start, t.y + start, count);
}

// Elements per task: large enough to amortize a task, small enough to balance.
constexpr size_t kTile = 4096;

void map_split(const KernelContext& ctx, MapTask task, size_t n) {
  if (n <= kTile) run_tile(&task, 0, n);
  else parallelize_tiles(ctx, run_tile, &task, n, kTile);
}

class ActivationKernel final : public PreparedKernel {
 public:
  explicit ActivationKernel(Fn fn) : fn_(fn), row_(row_of(fn, best_isa())) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    const char* op = fn_ == Fn::kTanh ? "tanh" : fn_ == Fn::kGelu ? "gelu" : "relu";
    if (in.size() != 1 || out.size() != 1) return internal_error(std::string(op) + ": wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    if (!is_f32(x) || !is_f32(o) || x.numel() != o.numel())
      return internal_error(std::string(op) + ": " + describe_shape(x) + " -> " + describe_shape(o));
    map_split(ctx, MapTask{row_, x.as<const float>(), o.as<float>()}, size_t(o.numel()));
    return Status::Ok();
  }
  const char* name() const override {
    return fn_ == Fn::kTanh ? "sg:tanh_f32" : fn_ == Fn::kGelu ? "sg:gelu_f32" : "sg:relu_f32";
  }

 private:
  Fn fn_;
  UnaryRowFn row_;
};

}  // namespace

void tanh_f32(const KernelContext& ctx, simd::Isa isa, const float* x, float* y, size_t n) {
  map_split(ctx, MapTask{row_of(Fn::kTanh, isa), x, y}, n);
}

UnaryRowFn unary_row(ops::OpId op, simd::Isa isa) {
  switch (op) {
    case ops::OpId::Tanh: return row_of(Fn::kTanh, isa);
    case ops::OpId::Gelu: return row_of(Fn::kGelu, isa);
    case ops::OpId::Relu: return row_of(Fn::kRelu, isa);
    case ops::OpId::Sqrt: return sqrt_row(isa);
    default: return nullptr;
  }
}

std::unique_ptr<PreparedKernel> make_activation(ops::OpId op, std::span<const InputInfo> in) {
  if (in.size() != 1 || !is_f32(in[0])) return nullptr;
  if (op == ops::OpId::Tanh) return std::make_unique<ActivationKernel>(Fn::kTanh);
  if (op == ops::OpId::Gelu) return std::make_unique<ActivationKernel>(Fn::kGelu);
  if (op == ops::OpId::Relu) return std::make_unique<ActivationKernel>(Fn::kRelu);
  return nullptr;
}

}  // namespace sg::kernels::xnn
