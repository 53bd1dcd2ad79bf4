// Quantized convolutions (kernels/quant: conv2d and conv2d_bias with an int8 HWIO
// filter): every dynamic kernel this CPU runs against the arithmetic SPEC §13
// states, written out here element by element: each image quantized once as one
// row (quantize_row), the patches of its integers (0 outside the image), exact
// integer sums with the stored integers, then the scales, then the bias and relu. Bit for bit, over SAME and VALID padding, strides,
// dilations, channel counts that are and are not multiples of 4 and 16, several
// images, and an image holding NaN (that image in f32, the others untouched).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "quant/dynamic_gemm.h"
#include "quant/quantized_kernels.h"
#include "quant/weight_format.h"

namespace sg::kernels::quant {
namespace {

std::vector<float> normal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The stored integer of element i of an int8 or int4 weight.
int stored(const Layout& l, const std::vector<uint8_t>& data, uint64_t i) {
  if (l.storage == Storage::kInt8) return int(int8_t(data[i]));
  const int nibble = (i % 2 == 0) ? (data[i / 2] & 0xF) : (data[i / 2] >> 4);
  return nibble >= 8 ? nibble - 16 : nibble;
}

struct Case {
  int64_t n, h, w, cin, kh, kw, cout, stride, dilation;
  const char* padding;
};

int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  if (same) return (in + stride - 1) / stride;
  const int64_t span = (k - 1) * dilation + 1;
  return in >= span ? (in - span) / stride + 1 : 0;
}

// SPEC §13's values for conv2d_bias(x, filter, bias) + relu. An image that holds NaN
// runs in f32 over the widened filter: there the float64 convolution, and `exact`
// false.
std::vector<float> expected(const Case& c, const Layout& l, const Quantized& q, const std::vector<float>& x,
                            const std::vector<float>& bias, std::vector<bool>& exact) {
  const bool same = std::string(c.padding) == "SAME";
  const int64_t oh = out_size(c.h, c.kh, c.stride, c.dilation, same), ow = out_size(c.w, c.kw, c.stride, c.dilation, same);
  const int64_t py = same ? std::max<int64_t>((oh - 1) * c.stride + (c.kh - 1) * c.dilation + 1 - c.h, 0) / 2 : 0;
  const int64_t px = same ? std::max<int64_t>((ow - 1) * c.stride + (c.kw - 1) * c.dilation + 1 - c.w, 0) / 2 : 0;
  const size_t pixels = size_t(c.h * c.w * c.cin);
  const Layout g = gemm_layout(l);
  const int64_t k = c.kh * c.kw * c.cin, block = l.storage == Storage::kInt4 ? g.block : k;
  std::vector<float> out(size_t(c.n * oh * ow * c.cout));
  exact.assign(out.size(), true);
  std::vector<float> wide(size_t(k * c.cout));
  dequantize(WeightView{&l, q.data.data(), q.scales.data()}, 0, wide.size(), wide.data());
  std::vector<int8_t> qi(pixels);
  for (int64_t n = 0; n < c.n; ++n) {
    float sa = 0.0f;
    const bool finite = quantize_row_portable(x.data() + size_t(n) * pixels, pixels, qi.data(), &sa);
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        std::vector<int> patch(size_t(k), 0);
        std::vector<double> patch_f32(size_t(k), 0.0);
        for (int64_t i = 0; i < c.kh; ++i)
          for (int64_t j = 0; j < c.kw; ++j) {
            const int64_t iy = oy * c.stride + i * c.dilation - py, ix = ox * c.stride + j * c.dilation - px;
            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
            for (int64_t ch = 0; ch < c.cin; ++ch) {
              patch[size_t((i * c.kw + j) * c.cin + ch)] = qi[size_t((iy * c.w + ix) * c.cin + ch)];
              patch_f32[size_t((i * c.kw + j) * c.cin + ch)] = x[size_t(n) * pixels + size_t((iy * c.w + ix) * c.cin + ch)];
            }
          }
        const size_t at = size_t(((n * oh + oy) * ow + ox) * c.cout);
        float* o = out.data() + at;
        for (int64_t co = 0; co < c.cout && !finite; ++co) {
          double sum = bias[size_t(co)];
          for (int64_t e = 0; e < k; ++e) sum += patch_f32[size_t(e)] * double(wide[size_t(e * c.cout + co)]);
          o[co] = float(sum < 0.0 ? 0.0 : sum);
          exact[at + size_t(co)] = false;
        }
        for (int64_t co = 0; co < c.cout && finite; ++co) {
          float acc = 0.0f;
          for (int64_t b = 0; b < k / block; ++b) {
            int32_t sum = 0;
            for (int64_t e = b * block; e < (b + 1) * block; ++e)
              sum += patch[size_t(e)] * stored(l, q.data, uint64_t(e * c.cout + co));
            if (l.storage == Storage::kInt8)
              acc = (float(sum) * sa) * scale_at(l.scale_type, q.scales.data(), uint64_t(co));
            else
              acc = std::fma(float(sum), scale_at(l.scale_type, q.scales.data(), uint64_t(b * c.cout + co)), acc);
          }
          if (l.storage == Storage::kInt4) acc *= sa;
          const float v = acc + bias[size_t(co)];
          o[co] = v < 0.0f ? 0.0f : v;
        }
      }
  }
  return out;
}

TEST(QuantizedConv, EveryDynamicKernelEqualsTheStatedArithmetic) {
  const std::vector<Case> cases = {
      {1, 32, 32, 3, 3, 3, 16, 1, 1, "SAME"},   // cnn's first layer: K 27
      {2, 9, 7, 16, 3, 3, 32, 2, 1, "VALID"},   // stride 2
      {3, 8, 8, 5, 2, 3, 7, 1, 2, "SAME"},      // dilation 2, odd channels
      {2, 6, 6, 32, 1, 1, 20, 1, 1, "VALID"},   // 1x1: K 32
      {1, 5, 4, 8, 3, 2, 64, 3, 1, "SAME"},     // stride 3, SAME's odd padding
  };
  for (Storage s : {Storage::kInt8}) {
    for (const Case& c : cases) {
      const Layout l = default_layout(s, {c.kh, c.kw, c.cin, c.cout});
      const std::vector<float> w = normal(size_t(c.kh * c.kw * c.cin * c.cout), uint32_t(c.cin * 7 + c.cout));
      const Quantized q = quantize(l, w.data());
      const Layout g = gemm_layout(l);
      ASSERT_TRUE(dynamic_layout(g)) << storage_name(s);
      const WeightView view{&g, q.data.data(), q.scales.data()};
      std::vector<float> x = normal(size_t(c.n * c.h * c.w * c.cin), uint32_t(c.h * 13 + c.n));
      if (c.n > 1) x[size_t(c.h * c.w * c.cin) + 3] = std::nanf("");  // image 1 runs in f32
      const std::vector<float> bias = normal(size_t(c.cout), 3);
      std::vector<bool> exact;
      const std::vector<float> want = expected(c, l, q, x, bias, exact);
      ops::Attrs attrs;
      const bool same = std::string(c.padding) == "SAME";
      attrs.values = {ops::AttrValue::Ints({c.stride, c.stride}), ops::AttrValue::Ints({c.dilation, c.dilation}),
                      ops::AttrValue::String(c.padding), ops::AttrValue::Int(1), ops::AttrValue::Int(ops::attr::kActRelu)};
      // Read in place where a dynamic kernel runs, and only with dynamic quantization
      // (weight-only, the widened filter's f32 convolution is the faster).
      ASSERT_EQ(reads_quantized(ops::OpId::Conv2DBias, attrs, 1, l), best_dyn_isa(g) != DynIsa::kReference);
      EXPECT_FALSE(reads_quantized(ops::OpId::Conv2DBias, attrs, 1, l, /*dynamic=*/false));
      // int4 filters are widened to f32 instead (quantized_kernels.cc says why).
      EXPECT_FALSE(reads_quantized(ops::OpId::Conv2DBias, attrs, 1, default_layout(Storage::kInt4, l.dims)));
      const int64_t oh = out_size(c.h, c.kh, c.stride, c.dilation, same);
      const int64_t ow = out_size(c.w, c.kw, c.stride, c.dilation, same);
      for (DynIsa isa : runnable_dyn_isas(g)) {
        auto conv = prepare_quantized(ops::OpId::Conv2DBias, attrs, l, q.data.data(), q.scales.data(),
                                      best_gemm_isa(g), pack_weights(view, isa));
        EXPECT_EQ(std::string(conv->name()).rfind("quant:conv:", 0), 0u) << conv->name();
        std::vector<float> out(want.size());
        TensorRef in[3], o[1];
        in[0] = TensorRef{DType::kF32, 4, {c.n, c.h, c.w, c.cin}, x.data()};
        in[1] = TensorRef{DType::kF32, 4, {c.kh, c.kw, c.cin, c.cout}, nullptr};
        in[2] = TensorRef{DType::kF32, 1, {c.cout}, const_cast<float*>(bias.data())};
        o[0] = TensorRef{DType::kF32, 4, {c.n, oh, ow, c.cout}, out.data()};
        ASSERT_TRUE(conv->run(KernelContext{}, in, o).ok());
        for (size_t i = 0; i < out.size(); ++i) {
          if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(out[i])) << i;
          } else if (!exact[i]) {
            EXPECT_NEAR(out[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << "f32 image at " << i;
          } else {
            ASSERT_EQ(out[i], want[i]) << storage_name(s) << " " << dyn_isa_name(isa) << " " << conv->name()
                                       << " case cin=" << c.cin << " cout=" << c.cout << " at " << i;
          }
        }
      }
    }
  }
}

// Without packed weights (weight-only, or no SIMD kernel) the patches run in f32 over
// the widened weights: within f32 rounding of the float64 convolution.
TEST(QuantizedConv, WeightOnlyIsTheF32ConvolutionOfTheWidenedFilter) {
  const Case c{2, 7, 6, 5, 3, 3, 9, 1, 1, "SAME"};
  const Layout l = default_layout(Storage::kInt8, {c.kh, c.kw, c.cin, c.cout});
  const std::vector<float> w = normal(size_t(c.kh * c.kw * c.cin * c.cout), 1);
  const Quantized q = quantize(l, w.data());
  std::vector<float> wide(w.size());
  dequantize(WeightView{&l, q.data.data(), q.scales.data()}, 0, wide.size(), wide.data());
  const std::vector<float> x = normal(size_t(c.n * c.h * c.w * c.cin), 2);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints({1, 1}), ops::AttrValue::Ints({1, 1}), ops::AttrValue::String("SAME"),
                  ops::AttrValue::Int(1)};
  auto conv = prepare_quantized(ops::OpId::Conv2D, attrs, l, q.data.data(), q.scales.data(),
                                best_gemm_isa(gemm_layout(l)), nullptr);
  std::vector<float> out(size_t(c.n * c.h * c.w * c.cout));
  TensorRef in[2], o[1];
  in[0] = TensorRef{DType::kF32, 4, {c.n, c.h, c.w, c.cin}, const_cast<float*>(x.data())};
  in[1] = TensorRef{DType::kF32, 4, {c.kh, c.kw, c.cin, c.cout}, nullptr};
  o[0] = TensorRef{DType::kF32, 4, {c.n, c.h, c.w, c.cout}, out.data()};
  ASSERT_TRUE(conv->run(KernelContext{}, in, o).ok());
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t y = 0; y < c.h; ++y)
      for (int64_t xx = 0; xx < c.w; ++xx)
        for (int64_t co = 0; co < c.cout; ++co) {
          double sum = 0.0;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              const int64_t iy = y + i - 1, ix = xx + j - 1;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              for (int64_t ch = 0; ch < c.cin; ++ch)
                sum += double(x[size_t(((n * c.h + iy) * c.w + ix) * c.cin + ch)]) *
                       double(wide[size_t(((i * 3 + j) * c.cin + ch) * c.cout + co)]);
            }
          EXPECT_NEAR(out[size_t(((n * c.h + y) * c.w + xx) * c.cout + co)], sum, 1e-5 * (1.0 + std::fabs(sum)));
        }
}

}  // namespace
}  // namespace sg::kernels::quant
