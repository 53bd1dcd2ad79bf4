#include "quant/dynamic_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/quantized_gemm.h"

#if defined(__aarch64__) && defined(__GNUC__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)  // the Linux arm64 hwcap bit of the dot-product extension
#endif
#endif

namespace sg::kernels::quant {
namespace detail {
#if defined(__x86_64__) && defined(__GNUC__)
bool quantize_row_avx2(const float* a, size_t k, int8_t* q, float* scale);
#endif
}  // namespace detail

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
bool cpu_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#endif

// aarch64: sdot/udot (FEAT_DotProd, optional from Armv8.2-A), as the kernel reports it.
bool cpu_neondot() {
#if defined(__aarch64__) && defined(__GNUC__) && defined(__linux__)
  static const bool yes = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return yes;
#else
  return false;
#endif
}

// Element (k, col) of the stored weights as an integer (-127..127 or -8..7).
int stored_int(const WeightView& w, size_t k, size_t col) {
  const size_t n = size_t(w.layout->dims[1]), i = k * n + col;
  if (w.layout->storage == Storage::kInt8) return int(int8_t(w.data[i]));
  const int nib = (w.data[i / 2] >> (4 * (i & 1))) & 0xF;
  return (nib ^ 8) - 8;
}

// A row in f32 over the widened weights (weight-only), for rows with a non-finite value.
void f32_row(const WeightView& w, const float* a, float* c) {
  const size_t k = size_t(w.layout->dims[0]), n = size_t(w.layout->dims[1]);
  const GemmIsa isa = best_gemm_isa(*w.layout);
  std::vector<float> row(isa == GemmIsa::kReference ? n : 0);
  const GemmProblem p{a, w, c, 1, k, n};
  gemm_columns(isa, p, 0, n, row.data());
}

}  // namespace

const char* dyn_isa_name(DynIsa isa) {
  switch (isa) {
    case DynIsa::kReference: return "reference";
    case DynIsa::kAvx2: return "avx2";
    case DynIsa::kAvx512Vnni: return "avx512vnni";
    case DynIsa::kNeonDot: return "neondot";
    case DynIsa::kAvxVnni: return "avxvnni";
  }
  return "?";
}

bool dynamic_layout(const Layout& l) {
  if (l.dims.size() != 2 || l.dims[0] <= 0 || l.dims[1] <= 0 || uint64_t(l.dims[0]) > kMaxDynamicK) return false;
  if (l.storage == Storage::kInt8) return l.axis == 1;
  if (l.storage == Storage::kInt4) return l.axis == 0 && l.block > 0 && l.dims[0] % l.block == 0;
  return false;
}

DynIsa best_dyn_isa(const Layout& l) {
  if (!dynamic_layout(l)) return DynIsa::kReference;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
    return DynIsa::kAvx512Vnni;
  if (l.storage == Storage::kInt8 && detail::cpu_avxvnni()) return DynIsa::kAvxVnni;
  if (cpu_avx2()) return DynIsa::kAvx2;
#endif
  if (cpu_neondot()) return DynIsa::kNeonDot;
  return DynIsa::kReference;
}

std::vector<DynIsa> runnable_dyn_isas(const Layout& l) {
  const DynIsa best = best_dyn_isa(l);
  if (best == DynIsa::kReference) return {};
  std::vector<DynIsa> isas;
#if defined(__x86_64__) && defined(__GNUC__)
  if (best == DynIsa::kAvx512Vnni || best == DynIsa::kAvxVnni) isas.push_back(DynIsa::kAvx2);  // they have AVX2
  if (best == DynIsa::kAvx512Vnni && l.storage == Storage::kInt8 && detail::cpu_avxvnni())
    isas.push_back(DynIsa::kAvxVnni);
#endif
  isas.push_back(best);
  return isas;
}

bool quantize_row(const float* a, size_t k, int8_t* q, float* scale) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_avx2()) return detail::quantize_row_avx2(a, k, q, scale);
#endif
  return quantize_row_portable(a, k, q, scale);
}

bool quantize_row_portable(const float* a, size_t k, int8_t* q, float* scale) {
  float amax = 0.0f;
  bool nan = false;
  for (size_t i = 0; i < k; ++i) {
    const float v = std::fabs(a[i]);
    nan = nan || std::isnan(v);
    amax = v > amax ? v : amax;
  }
  const float inv = 127.0f / amax;
  if (nan || !std::isfinite(amax) || (amax > 0.0f && !std::isfinite(inv))) {
    std::memset(q, 0, k);
    *scale = 0.0f;
    return false;
  }
  if (amax == 0.0f) {
    std::memset(q, 0, k);
    *scale = 0.0f;
    return true;
  }
  *scale = amax / 127.0f;
  for (size_t i = 0; i < k; ++i) q[i] = int8_t(std::clamp(std::nearbyint(a[i] * inv), -127.0f, 127.0f));
  return true;
}

size_t dynamic_column_tile(DynIsa) { return 64; }  // whole panels of 8 and 16 columns

std::shared_ptr<const PackedWeights> pack_weights(const WeightView& w, DynIsa isa) {
  auto out = std::make_shared<PackedWeights>();
  PackedWeights& p = *out;
  const Layout& l = *w.layout;
  p.isa = isa;
  p.storage = l.storage;
  p.k = size_t(l.dims[0]);
  p.n = size_t(l.dims[1]);
  p.block = l.storage == Storage::kInt4 ? size_t(l.block) : p.k;
  const bool i4 = l.storage == Storage::kInt4;
  // int4 multiplies unsigned nibbles (w + 8) by the signed activations (AVX2:
  // vpmaddubsw; VNNI: vpdpbusd with the nibbles as its unsigned operand), quadruples
  // of K per column, two steps per panel row of bytes (32 or 64). NEON dot packs as
  // VNNI does (sdot: the weights as they are, signed; int4 in halves, below).
  const bool wide16 = isa == DynIsa::kAvx512Vnni || isa == DynIsa::kNeonDot;
  const bool u4 = i4 && (isa == DynIsa::kAvx2 || isa == DynIsa::kAvx512Vnni);
  const bool offset8 = (isa == DynIsa::kAvx512Vnni || isa == DynIsa::kAvxVnni) && !i4;  // q + 128 activations
  const bool quad = wide16 || u4 || isa == DynIsa::kAvxVnni;
  p.block_pad = u4 ? (p.block + 7) / 8 * 8 : (p.block + 3) / 4 * 4;
  p.blocks = p.k / p.block;
  p.nr = wide16 ? 16 : 8;
  p.panels = (p.n + p.nr - 1) / p.nr;
  const size_t npad = p.panels * p.nr;
  // Step of 4 K: 4 * nr elements, in the kernel's order; int4 halves them (AVX2,
  // VNNI: element j of step t in the low nibble of byte j, of step t + 1 in its high
  // nibble; NEON: element j of the step low, element j + 2 nr high).
  const size_t elems = 4 * p.nr, step_bytes = i4 ? elems / 2 : elems, steps = p.block_pad / 4;
  p.panel_bytes = p.blocks * steps * step_bytes;
#if defined(__x86_64__) && defined(__GNUC__)
  p.amx = isa == DynIsa::kAvx512Vnni && !i4 && detail::amx_ready();
#endif
  // AMX reads B tiles of 16 steps: the last panel's may run 15 steps past its end
  // (against activations that are 0 there).
  p.data.assign(p.panels * p.panel_bytes + (p.amx ? 16 * 64 : 64), 0);
  std::vector<int8_t> e(elems), e2(elems);
  const auto step_elements = [&](size_t pan, size_t b, size_t t, int8_t* dst) {
    for (size_t j = 0; j < elems; ++j) {
      size_t c, kk;
      if (quad) {
        c = j / 4;
        kk = j % 4;
      } else {  // AVX2 int8: j = h*(2 nr) + c*2 + e, K offset 2h + e
        const size_t h = j / (2 * p.nr), r = j % (2 * p.nr);
        c = r / 2;
        kk = 2 * h + r % 2;
      }
      const size_t col = pan * p.nr + c, kb = 4 * t + kk;
      dst[j] = col < p.n && kb < p.block ? int8_t(stored_int(w, b * p.block + kb, col)) : int8_t(0);
    }
  };
  for (size_t pan = 0; pan < p.panels; ++pan)
    for (size_t b = 0; b < p.blocks; ++b)
      for (size_t t = 0; t < steps; t += (u4 ? 2 : 1)) {
        step_elements(pan, b, t, e.data());
        uint8_t* dst = p.data.data() + pan * p.panel_bytes + (b * steps + t) * step_bytes;
        if (u4) {
          step_elements(pan, b, t + 1, e2.data());
          for (size_t j = 0; j < elems; ++j) dst[j] = uint8_t((e[j] + 8) | ((e2[j] + 8) << 4));
        } else if (i4) {
          for (size_t j = 0; j < elems / 2; ++j)
            dst[j] = uint8_t((uint8_t(e[j]) & 0xF) | ((uint8_t(e[j + elems / 2]) & 0xF) << 4));
        } else {
          std::memcpy(dst, e.data(), elems);
        }
      }
  p.scales.assign(i4 ? p.blocks * npad : npad, 0.0f);
  for (size_t b = 0; b < (i4 ? p.blocks : 1); ++b)
    for (size_t col = 0; col < p.n; ++col) p.scales[b * npad + col] = scale_at(l.scale_type, w.scales, b * p.n + col);
  if (offset8) {
    p.colsum.assign(p.blocks * npad, 0);
    for (size_t b = 0; b < p.blocks; ++b)
      for (size_t col = 0; col < p.n; ++col) {
        int64_t s = 0;
        for (size_t kb = 0; kb < p.block; ++kb) s += stored_int(w, b * p.block + kb, col);
        // Wraps as the kernel's int32 sums do: the difference is exact.
        p.colsum[b * npad + col] = int32_t(uint32_t(uint64_t(s * 128)));
      }
  }
  return out;
}

namespace {

// AMX's tiles read a row to its stride, past its blocks: zeros there.
void zero_amx_pad(const PackedWeights& p, uint8_t* row, size_t stride) {
  const size_t used = p.blocks * p.block_pad;
  if (p.amx && stride > used) std::memset(row + used, 0, stride - used);
}

}  // namespace

namespace {

// The operand forms of the kernels (QuantizedRows).
struct RowForm {
  bool i4, vnni, u4, s8;
  explicit RowForm(const PackedWeights& p)
      : i4(p.storage == Storage::kInt4),
        vnni((p.isa == DynIsa::kAvx512Vnni || p.isa == DynIsa::kAvxVnni) && !i4),  // int8 on VNNI: q + 128
        u4(i4 && (p.isa == DynIsa::kAvx2 || p.isa == DynIsa::kAvx512Vnni)),
        s8(p.isa == DynIsa::kNeonDot) {}  // int8 as it is (sdot: signed x signed)
};

// Sizes `out` for m rows of p's operand.
void size_rows(const PackedWeights& p, size_t m, QuantizedRows* out) {
  const RowForm f(p);
  out->stride = p.amx ? (p.blocks * p.block_pad + 63) / 64 * 64 : p.blocks * p.block_pad;
  out->scale.resize(m);
  out->finite.resize(m);
  // 64 bytes of slack: gather_patches_avx512 writes whole vectors.
  if (f.vnni || f.u4 || f.s8) out->a8.resize(m * out->stride + 64);
  else out->a16.resize(m * out->stride + 16);
  if (f.u4) out->offset.resize(m * p.blocks);
}

// Row r of the operand from its integers q (k of them, signed).
void store_row(const PackedWeights& p, const RowForm& f, const int8_t* q, size_t r, QuantizedRows* out) {
  const size_t stride = out->stride;
  if (f.vnni) zero_amx_pad(p, out->a8.data() + r * stride, stride);
  for (size_t b = 0; b < p.blocks; ++b) {
    const int8_t* src = q + b * p.block;
    if (f.s8) {
      int8_t* dst = reinterpret_cast<int8_t*>(out->a8.data()) + r * stride + b * p.block_pad;
      std::memcpy(dst, src, p.block);
      std::memset(dst + p.block, 0, p.block_pad - p.block);
    } else if (f.u4) {
      uint8_t* dst = out->a8.data() + r * stride + b * p.block_pad;
      int32_t sum = 0;
      for (size_t i = 0; i < p.block; ++i) {
        dst[i] = uint8_t(src[i]);
        sum += src[i];
      }
      for (size_t i = p.block; i < p.block_pad; ++i) dst[i] = 0;
      out->offset[r * p.blocks + b] = 8 * sum;
    } else if (f.vnni) {
      // q + 128 as a byte is q with its top bit flipped: eight at a time.
      uint8_t* dst = out->a8.data() + r * stride + b * p.block_pad;
      size_t i = 0;
      for (; i + 8 <= p.block; i += 8) {
        uint64_t x;
        std::memcpy(&x, src + i, 8);
        x ^= 0x8080808080808080ull;
        std::memcpy(dst + i, &x, 8);
      }
      for (; i < p.block; ++i) dst[i] = uint8_t(int(src[i]) + 128);
      for (i = p.block; i < p.block_pad; ++i) dst[i] = 128;
    } else {
      int16_t* dst = out->a16.data() + r * stride + b * p.block_pad;
      for (size_t i = 0; i < p.block; ++i) dst[i] = src[i];
      for (size_t i = p.block; i < p.block_pad; ++i) dst[i] = 0;
    }
  }
}

// One image's integers gathered into its oh*ow patch rows of `row_stride`, a copy of
// `run` adjacent integers where a window's row lies inside the image, 0 outside.
void gather_patches(const PatchGeometry& g, const int8_t* image, int8_t* dst, size_t row_stride) {
  const size_t c = size_t(g.c), run = size_t(g.kw) * c;
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox, dst += row_stride) {
      const int64_t x0 = ox * g.sx - g.px;
      const bool whole = g.dx == 1 && x0 >= 0 && x0 + g.kw <= g.w;
      int8_t* out = dst;
      for (int64_t i = 0; i < g.kh; ++i, out += run) {
        const int64_t iy = oy * g.sy + i * g.dy - g.py;
        const int8_t* line = image + iy * g.w * int64_t(c);
        if (iy < 0 || iy >= g.h) {
          std::memset(out, 0, run);
        } else if (whole) {
          std::memcpy(out, line + x0 * int64_t(c), run);
        } else {
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t ix = x0 + j * g.dx;
            if (ix < 0 || ix >= g.w) std::memset(out + j * c, 0, c);
            else std::memcpy(out + j * c, line + ix * int64_t(c), c);
          }
        }
      }
    }
}

}  // namespace

void quantize_rows(const PackedWeights& p, const float* a, size_t m, QuantizedRows* out) {
  size_rows(p, m, out);
  const RowForm f(p);
  thread_local std::vector<int8_t> q;
  q.resize(p.k);
#if defined(__x86_64__) && defined(__GNUC__)
  const size_t stride = out->stride;
  // VNNI's rows: quantized in place (int4, unpadded blocks of 16s: with the blocks'
  // sums; int8: its one block padded with q = 0, byte 128).
  const bool whole = p.isa == DynIsa::kAvx512Vnni && (f.i4 ? p.block == p.block_pad && p.block % 16 == 0 : true);
  if (whole) {
    for (size_t r = 0; r < m; ++r) {
      int32_t* sums = f.i4 ? out->offset.data() + r * p.blocks : nullptr;
      uint8_t* row = out->a8.data() + r * stride;
      out->finite[r] = detail::quantize_row_avx512(a + r * p.k, p.k, row, !f.i4, p.block, sums, &out->scale[r]);
      if (!f.i4) std::memset(row + p.k, 128, p.block_pad - p.k);
      zero_amx_pad(p, row, stride);
      for (size_t b = 0; sums != nullptr && b < p.blocks; ++b) sums[b] *= 8;  // the nibbles' + 8
    }
    return;
  }
#endif
  for (size_t r = 0; r < m; ++r) {
    out->finite[r] = quantize_row(a + r * p.k, p.k, q.data(), &out->scale[r]) ? 1 : 0;
    store_row(p, f, q.data(), r, out);
  }
}

void quantize_patches(const PackedWeights& p, const float* x, const PatchGeometry& g, QuantizedRows* out) {
  const size_t per_image = size_t(g.oh * g.ow), pixels = size_t(g.h * g.w * g.c);
  size_rows(p, size_t(g.n) * per_image, out);
  const RowForm f(p);
  thread_local std::vector<int8_t> q, patch_q;
  q.resize(pixels + 64);  // gather_patches_avx512 reads whole vectors
  for (int64_t n = 0; n < g.n; ++n) {
    const float* image = x + size_t(n) * pixels;
    const size_t first = size_t(n) * per_image;
    float scale = 0.0f;
    bool finite = false;
#if defined(__x86_64__) && defined(__GNUC__)
    // VNNI int8: the image quantized to q + 128 once, gathered straight into the rows.
    const bool vnni512 = f.vnni && p.isa == DynIsa::kAvx512Vnni;
    uint8_t* flipped = reinterpret_cast<uint8_t*>(q.data());
    if (vnni512) {
      finite = detail::quantize_row_avx512(image, pixels, flipped, true, pixels, nullptr, &scale);
      detail::gather_patches_avx512(p, g, flipped, out->a8.data() + first * out->stride, out->stride);
    }
#else
    constexpr bool vnni512 = false;
#endif
    if (!vnni512) {
      finite = quantize_row(image, pixels, q.data(), &scale);
      patch_q.resize(per_image * p.k);
      gather_patches(g, q.data(), patch_q.data(), p.k);
      for (size_t r = 0; r < per_image; ++r) store_row(p, f, patch_q.data() + r * p.k, first + r, out);
    }
    std::fill(out->scale.begin() + first, out->scale.begin() + first + per_image, scale);
    std::fill(out->finite.begin() + first, out->finite.begin() + first + per_image, uint8_t(finite ? 1 : 0));
  }
}

void dynamic_gemm_columns(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t col_begin,
                          size_t col_end, const Epilogue& e) {
  const size_t pb = col_begin / p.nr, pe = (col_end + p.nr - 1) / p.nr;
#if defined(__x86_64__) && defined(__GNUC__)
  if (p.isa == DynIsa::kAvx2) return detail::dyn_avx2(p, rows, m, c, pb, pe, e);
  if (p.isa == DynIsa::kAvx512Vnni) return detail::dyn_avx512vnni(p, rows, m, c, pb, pe, e);
  if (p.isa == DynIsa::kAvxVnni) return detail::dyn_avxvnni(p, rows, m, c, pb, pe, e);
#endif
#if defined(__aarch64__) && defined(__GNUC__)
  if (p.isa == DynIsa::kNeonDot) return detail::dyn_neondot(p, rows, m, c, pb, pe, e);
#endif
  (void)e;
  (void)pb;
  (void)pe;
  (void)rows;
  (void)m;
  (void)c;
}

void dynamic_gemm_reference(const WeightView& w, const float* a, float* c, size_t m) {
  const Layout& l = *w.layout;
  const size_t k = size_t(l.dims[0]), n = size_t(l.dims[1]);
  const bool i4 = l.storage == Storage::kInt4;
  const size_t block = i4 ? size_t(l.block) : k;
  std::vector<int8_t> q(k);
  std::vector<int32_t> isum(n);
  std::vector<float> acc(n);
  for (size_t r = 0; r < m; ++r) {
    float sa = 0.0f;
    if (!quantize_row(a + r * k, k, q.data(), &sa)) {
      f32_row(w, a + r * k, c + r * n);
      continue;
    }
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (size_t b = 0; b < k / block; ++b) {
      std::fill(isum.begin(), isum.end(), 0);
      for (size_t kk = b * block; kk < (b + 1) * block; ++kk)
        for (size_t col = 0; col < n; ++col) isum[col] += int32_t(q[kk]) * stored_int(w, kk, col);
      if (i4)
        for (size_t col = 0; col < n; ++col)
          acc[col] = std::fma(float(isum[col]), scale_at(l.scale_type, w.scales, b * n + col), acc[col]);
    }
    for (size_t col = 0; col < n; ++col) {
      const float sw = scale_at(l.scale_type, w.scales, col);
      c[r * n + col] = i4 ? acc[col] * sa : (float(isum[col]) * sa) * sw;
    }
  }
}

}  // namespace sg::kernels::quant
