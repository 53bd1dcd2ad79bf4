#include "quant/weight_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stagegraph/dtype.h"

namespace sg::kernels::quant {
namespace {

// Elements after one index of `axis` (the product of the later dims).
uint64_t inner_count(const Layout& l) {
  uint64_t n = 1;
  for (size_t d = size_t(l.axis) + 1; d < l.dims.size(); ++d) n *= uint64_t(l.dims[d]);
  return n;
}

// The scale of element i.
uint64_t scale_index(const Layout& l, uint64_t inner, uint64_t i) {
  const uint64_t len = uint64_t(l.dims[size_t(l.axis)]);
  const uint64_t a = (i / inner) % len;
  if (l.storage == Storage::kInt8) return a;
  const uint64_t outer = i / (inner * len);
  return (outer * (len / uint64_t(l.block)) + a / uint64_t(l.block)) * inner + i % inner;
}

void store_scale(ScaleType t, float s, uint8_t* out, uint64_t i) {
  switch (t) {
    case ScaleType::kF32: std::memcpy(out + 4 * i, &s, 4); return;
    case ScaleType::kF16: {
      const uint16_t h = float_to_half(s);
      std::memcpy(out + 2 * i, &h, 2);
      return;
    }
    case ScaleType::kBF16: {
      const uint16_t h = float_to_bf16(s);
      std::memcpy(out + 2 * i, &h, 2);
      return;
    }
  }
}

size_t scale_size(ScaleType t) { return t == ScaleType::kF32 ? 4 : 2; }

int8_t nibble(const uint8_t* data, uint64_t i) {
  const uint8_t b = uint8_t(data[i / 2] >> (4 * (i & 1))) & 0xF;
  return int8_t(int(b ^ 8) - 8);
}

}  // namespace

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::kF32: return "f32";
    case Storage::kInt8: return "int8";
    case Storage::kInt4: return "int4";
    case Storage::kBF16: return "bf16";
    case Storage::kF16: return "f16";
  }
  return "?";
}

const char* scale_type_name(ScaleType t) {
  switch (t) {
    case ScaleType::kF32: return "f32";
    case ScaleType::kF16: return "f16";
    case ScaleType::kBF16: return "bf16";
  }
  return "?";
}

Layout default_layout(Storage storage, const std::vector<int64_t>& dims, int64_t block) {
  Layout l;
  l.storage = storage;
  l.dims = dims;
  const int rank = int(dims.size());
  if (storage == Storage::kInt8 && rank > 0) {
    l.axis = rank - 1;
  } else if (storage == Storage::kInt4 && rank > 0) {
    l.axis = std::max(rank - 2, 0);
    l.scale_type = ScaleType::kF16;
    const int64_t len = dims[size_t(l.axis)];
    l.block = std::max<int64_t>(1, std::min(block, len));
    while (len > 0 && len % l.block != 0) --l.block;
  }
  return l;
}

Layout gemm_layout(const Layout& l) {
  if (l.dims.size() != 4) return l;
  const bool int8_by_o = l.storage == Storage::kInt8 && l.axis == 3;
  const bool int4_by_i = l.storage == Storage::kInt4 && l.axis == 2;
  if (!int8_by_o && !int4_by_i) return l;
  Layout g = l;
  g.dims = {l.dims[0] * l.dims[1] * l.dims[2], l.dims[3]};
  g.axis = int8_by_o ? 1 : 0;
  return g;
}

bool storage_from_name(const std::string& name, Storage* out) {
  for (int s = 1; s < kNumStorages; ++s)
    if (name == storage_name(Storage(s))) {
      *out = Storage(s);
      return true;
    }
  return false;
}

std::string check_layout(const Layout& l) {
  if (int(l.storage) >= kNumStorages)
    return "unknown weight storage " + std::to_string(int(l.storage));
  if (int(l.scale_type) >= kNumScaleTypes)
    return "unknown scale type " + std::to_string(int(l.scale_type));
  const std::string name = storage_name(l.storage);
  const bool scaled = l.storage == Storage::kInt8 || l.storage == Storage::kInt4;
  if (!scaled) {
    if (l.axis != 0 || l.block != 0) return name + " storage takes no axis or block size";
    return "";
  }
  if (l.dims.empty()) return name + " storage needs a tensor of rank >= 1 (a scale per channel or block)";
  if (l.axis < 0 || size_t(l.axis) >= l.dims.size())
    return name + " axis " + std::to_string(l.axis) + " is out of range for rank " + std::to_string(l.dims.size());
  const int64_t len = l.dims[size_t(l.axis)];
  if (l.storage == Storage::kInt8) {
    if (l.block != 0) return "int8 storage takes no block size (one scale per channel)";
    return "";
  }
  if (l.block <= 0) return "int4 block size " + std::to_string(l.block) + " is not positive";
  if (len % l.block != 0)
    return "int4 block size " + std::to_string(l.block) + " does not divide axis " + std::to_string(l.axis) +
           " of size " + std::to_string(len);
  return "";
}

uint64_t element_count(const Layout& l) {
  uint64_t n = 1;
  for (int64_t d : l.dims) n *= uint64_t(d);
  return n;
}

uint64_t data_bytes(const Layout& l) {
  const uint64_t n = element_count(l);
  switch (l.storage) {
    case Storage::kF32: return 4 * n;
    case Storage::kInt8: return n;
    case Storage::kInt4: return (n + 1) / 2;
    case Storage::kBF16:
    case Storage::kF16: return 2 * n;
  }
  return 0;
}

uint64_t scale_count(const Layout& l) {
  switch (l.storage) {
    case Storage::kInt8: return uint64_t(l.dims[size_t(l.axis)]);
    case Storage::kInt4: return element_count(l) / uint64_t(l.block);
    default: return 0;
  }
}

uint64_t scale_bytes(const Layout& l) { return scale_count(l) * scale_size(l.scale_type); }

float bf16_to_float(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((x >> 16) | 0x40);  // NaN stays a quiet NaN
  x += 0x7FFFu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

float scale_at(ScaleType t, const uint8_t* scales, uint64_t i) {
  switch (t) {
    case ScaleType::kF32: {
      float s;
      std::memcpy(&s, scales + 4 * i, 4);
      return s;
    }
    case ScaleType::kF16: {
      uint16_t h;
      std::memcpy(&h, scales + 2 * i, 2);
      return half_to_float(h);
    }
    case ScaleType::kBF16: {
      uint16_t h;
      std::memcpy(&h, scales + 2 * i, 2);
      return bf16_to_float(h);
    }
  }
  return 0.0f;
}

void dequantize(const WeightView& w, uint64_t begin, uint64_t count, float* out) {
  const Layout& l = *w.layout;
  switch (l.storage) {
    case Storage::kF32: std::memcpy(out, w.data + 4 * begin, 4 * count); return;
    case Storage::kBF16:
    case Storage::kF16:
      for (uint64_t k = 0; k < count; ++k) {
        uint16_t h;
        std::memcpy(&h, w.data + 2 * (begin + k), 2);
        out[k] = l.storage == Storage::kBF16 ? bf16_to_float(h) : half_to_float(h);
      }
      return;
    case Storage::kInt8:
    case Storage::kInt4: {
      const uint64_t inner = inner_count(l);
      for (uint64_t k = 0; k < count; ++k) {
        const uint64_t i = begin + k;
        const float q = l.storage == Storage::kInt8 ? float(int8_t(w.data[i])) : float(nibble(w.data, i));
        out[k] = q * scale_at(l.scale_type, w.scales, scale_index(l, inner, i));
      }
      return;
    }
  }
}

Quantized quantize(const Layout& l, const float* w) {
  Quantized q;
  const uint64_t n = element_count(l);
  q.data.assign(data_bytes(l), 0);
  q.scales.assign(scale_bytes(l), 0);
  switch (l.storage) {
    case Storage::kF32: std::memcpy(q.data.data(), w, 4 * n); return q;
    case Storage::kBF16:
    case Storage::kF16:
      for (uint64_t i = 0; i < n; ++i) {
        const uint16_t h = l.storage == Storage::kBF16 ? float_to_bf16(w[i]) : float_to_half(w[i]);
        std::memcpy(q.data.data() + 2 * i, &h, 2);
      }
      return q;
    case Storage::kInt8:
    case Storage::kInt4: break;
  }
  const bool int8 = l.storage == Storage::kInt8;
  const uint64_t inner = inner_count(l), scales = scale_count(l);
  std::vector<float> amax(scales, 0.0f);
  for (uint64_t i = 0; i < n; ++i) {
    float& m = amax[scale_index(l, inner, i)];
    m = std::max(m, std::fabs(w[i]));
  }
  // The scale as stored, then read back: quantization divides by the value the
  // runtime multiplies by.
  std::vector<float> stored(scales);
  for (uint64_t s = 0; s < scales; ++s) {
    store_scale(l.scale_type, amax[s] / (int8 ? 127.0f : 7.0f), q.scales.data(), s);
    stored[s] = scale_at(l.scale_type, q.scales.data(), s);
  }
  const float lo = int8 ? -127.0f : -8.0f, hi = int8 ? 127.0f : 7.0f;
  for (uint64_t i = 0; i < n; ++i) {
    const float s = stored[scale_index(l, inner, i)];
    const float v = s == 0.0f ? 0.0f : std::clamp(std::nearbyint(w[i] / s), lo, hi);
    if (int8) {
      q.data[i] = uint8_t(int8_t(v));
    } else {
      q.data[i / 2] = uint8_t(q.data[i / 2] | ((uint8_t(int8_t(v)) & 0xF) << (4 * (i & 1))));
    }
  }
  return q;
}

}  // namespace sg::kernels::quant
