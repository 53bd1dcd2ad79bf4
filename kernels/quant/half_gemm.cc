#include "quant/half_gemm.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "stagegraph/dtype.h"

namespace sg::kernels::quant {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
bool cpu_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return yes;
}
#endif

bool half_layout(const Layout& l) {
  return (l.storage == Storage::kBF16 || l.storage == Storage::kF16) && l.dims.size() == 2 && l.dims[0] > 0 &&
         l.dims[1] > 0;
}

uint16_t stored_half(const WeightView& w, size_t k, size_t col) {
  const size_t i = k * size_t(w.layout->dims[1]) + col;
  uint16_t h;
  std::memcpy(&h, w.data + 2 * i, 2);
  return h;
}

float widen_half(Storage s, uint16_t h) { return s == Storage::kBF16 ? bf16_to_float(h) : half_to_float(h); }

// vdpbf16ps treats denormal inputs as zero and flushes denormal results.
float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

}  // namespace

const char* half_isa_name(HalfIsa isa) {
  switch (isa) {
    case HalfIsa::kNone: return "none";
    case HalfIsa::kAvx512Widen: return "avx512panels";
    case HalfIsa::kAvx512Bf16Dot: return "avx512bf16dot";
  }
  return "?";
}

bool cpu_has_avx512bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!cpu_avx512() || !__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
    return (a & (1u << 5)) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

HalfIsa best_half_isa(const Layout& l) {
  if (!half_layout(l)) return HalfIsa::kNone;
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_avx512()) return HalfIsa::kAvx512Widen;
#endif
  return HalfIsa::kNone;
}

bool bf16_dot_runs(const Layout& l) { return half_layout(l) && l.storage == Storage::kBF16 && cpu_has_avx512bf16(); }

std::shared_ptr<const HalfPanels> pack_half(const WeightView& w, HalfIsa isa) {
  auto out = std::make_shared<HalfPanels>();
  HalfPanels& p = *out;
  p.isa = isa;
  p.storage = w.layout->storage;
  p.k = size_t(w.layout->dims[0]);
  p.n = size_t(w.layout->dims[1]);
  const bool dot = isa == HalfIsa::kAvx512Bf16Dot;
  p.kpad = dot ? (p.k + 1) / 2 * 2 : p.k;
  p.panels = (p.n + kHalfPanel - 1) / kHalfPanel;
  // A panel of zeros: the padding (columns past N, the K pair's second half).
  p.data.assign(p.panels * p.panel_halves() + 64, 0);
  for (size_t pan = 0; pan < p.panels; ++pan) {
    uint16_t* dst = p.data.data() + pan * p.panel_halves();
    for (size_t k = 0; k < p.k; ++k)
      for (size_t c = 0; c < kHalfPanel && pan * kHalfPanel + c < p.n; ++c) {
        const uint16_t h = stored_half(w, k, pan * kHalfPanel + c);
        if (dot) dst[(k / 2) * 2 * kHalfPanel + 2 * c + k % 2] = h;
        else dst[k * kHalfPanel + c] = h;
      }
  }
  return out;
}

uint16_t round_activation_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::fpclassify(x) == FP_SUBNORMAL || x == 0.0f) return uint16_t((u >> 16) & 0x8000u);
  if (std::isnan(x)) return uint16_t((u >> 16) | 0x0040u);
  if (std::isinf(x)) return uint16_t(u >> 16);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

void round_rows_bf16(const float* a, size_t m, size_t k, size_t kpad, uint16_t* out) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_has_avx512bf16()) return detail::round_rows_bf16_avx512(a, m, k, kpad, out);
#endif
  for (size_t r = 0; r < m; ++r) {
    for (size_t i = 0; i < k; ++i) out[r * kpad + i] = round_activation_bf16(a[r * k + i]);
    for (size_t i = k; i < kpad; ++i) out[r * kpad + i] = 0;
  }
}

void half_gemm_columns(const HalfPanels& p, const float* a, const uint16_t* a_bf16, size_t m, float* c,
                       size_t col_begin, size_t col_end, Epilogue epilogue) {
  const size_t pb = col_begin / kHalfPanel, pe = (col_end + kHalfPanel - 1) / kHalfPanel;
#if defined(__x86_64__) && defined(__GNUC__)
  if (p.isa == HalfIsa::kAvx512Bf16Dot) return detail::half_dot_avx512bf16(p, a_bf16, m, c, pb, pe, epilogue);
  if (p.isa == HalfIsa::kAvx512Widen) return detail::half_widen_avx512(p, a, m, c, pb, pe, epilogue);
#endif
  // Packed only where a kernel runs (best_half_isa).
  (void)p;
  (void)epilogue;
  (void)a;
  (void)a_bf16;
  (void)m;
  (void)c;
  (void)pb;
  (void)pe;
}

void half_gemm_reference(HalfIsa isa, const WeightView& w, const float* a, size_t m, float* c) {
  const Storage s = w.layout->storage;
  const size_t k = size_t(w.layout->dims[0]), n = size_t(w.layout->dims[1]);
  for (size_t r = 0; r < m; ++r)
    for (size_t col = 0; col < n; ++col) {
      const float* ar = a + r * k;
      float acc = 0.0f;
      if (isa == HalfIsa::kAvx512Bf16Dot) {
        const auto product = [&](size_t i) {
          if (i >= k) return 0.0f;
          const float x = flush(bf16_to_float(round_activation_bf16(ar[i])));
          return x * flush(bf16_to_float(stored_half(w, i, col)));  // exact
        };
        for (size_t i = 0; i < k; i += 2) {
          acc = flush(acc + product(i + 1));
          acc = flush(acc + product(i));
        }
      } else {
        for (size_t i = 0; i < k; ++i) acc = std::fma(ar[i], widen_half(s, stored_half(w, i, col)), acc);
      }
      c[r * n + col] = acc;
    }
}

}  // namespace sg::kernels::quant
