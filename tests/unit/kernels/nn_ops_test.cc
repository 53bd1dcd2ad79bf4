// softmax, log_softmax, conv2d and pooling against naive float64 loops, with
// TensorFlow's SAME padding computed independently here.
#include <cmath>
#include <string>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;

std::vector<double> softmax_reference(const HostTensor& x, int axis, bool log) {
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t n = s[size_t(axis)];
  std::vector<double> want(size_t(x.numel()));
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      auto at = [&](int64_t i) { return (a * n + i) * inner + b; };
      double mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x.at(at(i)));
      for (int64_t i = 0; i < n; ++i) sum += std::exp(x.at(at(i)) - mx);
      for (int64_t i = 0; i < n; ++i)
        want[size_t(at(i))] = log ? x.at(at(i)) - mx - std::log(sum) : std::exp(x.at(at(i)) - mx) / sum;
    }
  return want;
}

TEST(Softmax, EveryAxis) {
  for (bool log : {false, true})
    for (int axis = 0; axis < 3; ++axis)
      for (DType dt : {DType::kF32, DType::kF16}) {
        // Large values: without subtracting the max, exp would overflow.
        HostTensor x = HostTensor::random(dt, {3, 4, 5}, 41, dt == DType::kF32 ? 80 : 5, dt == DType::kF32 ? 100 : 10);
        KernelTester(log ? OpId::LogSoftmax : OpId::Softmax).in(x).out(dt, {3, 4, 5}).attr_int(axis)
            .expect(softmax_reference(x, axis, log), dt == DType::kF32 ? 1e-5 : 3e-3, 1e-5);
      }
  KernelTester(OpId::Softmax).in(HostTensor(DType::kF32, {0, 3})).out(DType::kF32, {0, 3}).attr_int(1).expect({});
}

// log_softmax is (x - max) - log(sum): with a large max, x - (max + log(sum))
// loses log(sum) to the rounding of max + log(sum) (1e5 + 0.69 in float32).
TEST(Softmax, LogSoftmaxKeepsPrecisionNearALargeMax) {
  const double log2 = std::log(2.0);
  KernelTester(OpId::LogSoftmax).in(HostTensor::of(DType::kF32, {3, 2}, {1e5, 1e5, -1e5, 1e5, 0, -INFINITY}))
      .out(DType::kF32, {3, 2}).attr_int(1)
      .expect({-log2, -log2, -2e5, 0, 0, -INFINITY}, 1e-6, 1e-6);
}

struct Geometry {
  int64_t out, pad_before;
};

Geometry geometry(const std::string& padding, int64_t in, int64_t k, int64_t stride, int64_t dilation) {
  const int64_t span = (k - 1) * dilation + 1;
  if (padding == "VALID") return {in >= span ? (in - span) / stride + 1 : 0, 0};
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + span - in, 0);
  return {out, total / 2};
}

struct ConvCase {
  Shape x;  // N, H, W, C
  int64_t kh, kw, cout, sh, sw, dh, dw, groups;
  std::string padding;
};

void check_conv(const ConvCase& c, DType dt = DType::kF32) {
  SCOPED_TRACE(::testing::Message() << c.padding << " stride " << c.sh << "x" << c.sw << " dilation " << c.dh
                                    << "x" << c.dw << " groups " << c.groups << " " << dtype_name(dt));
  const int64_t n = c.x[0], h = c.x[1], w = c.x[2], cin = c.x[3], cin_g = cin / c.groups, cout_g = c.cout / c.groups;
  const Geometry gy = geometry(c.padding, h, c.kh, c.sh, c.dh), gx = geometry(c.padding, w, c.kw, c.sw, c.dw);
  HostTensor x = HostTensor::random(dt, c.x, 51), f = HostTensor::random(dt, {c.kh, c.kw, cin_g, c.cout}, 52);
  std::vector<double> want;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < gy.out; ++oy)
      for (int64_t ox = 0; ox < gx.out; ++ox)
        for (int64_t co = 0; co < c.cout; ++co) {
          const int64_t g = co / cout_g;
          double s = 0;
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx)
              for (int64_t ci = 0; ci < cin_g; ++ci) {
                const int64_t iy = oy * c.sh - gy.pad_before + ky * c.dh, ix = ox * c.sw - gx.pad_before + kx * c.dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                s += x.at(((b * h + iy) * w + ix) * cin + g * cin_g + ci) * f.at(((ky * c.kw + kx) * cin_g + ci) * c.cout + co);
              }
          want.push_back(s);
        }
  KernelTester(OpId::Conv2D)
      .in(x)
      .in(f)
      .out(dt, {n, gy.out, gx.out, c.cout})
      .attr_ints({c.sh, c.sw})
      .attr_ints({c.dh, c.dw})
      .attr_string(c.padding)
      .attr_int(c.groups)
      .expect(want, dt == DType::kF32 ? 1e-5 : 5e-3, dt == DType::kF32 ? 1e-5 : 2e-2);
}

TEST(Conv2D, SameAndValidWithStridesAndDilations) {
  for (const std::string pad : {"VALID", "SAME"}) {
    check_conv({{2, 7, 8, 3}, 3, 3, 4, 1, 1, 1, 1, 1, pad});
    check_conv({{1, 7, 8, 3}, 3, 3, 5, 2, 2, 1, 1, 1, pad});   // odd total padding at stride 2
    check_conv({{1, 9, 6, 2}, 3, 2, 3, 1, 2, 2, 1, 1, pad});   // dilation
    check_conv({{1, 10, 10, 2}, 2, 4, 2, 3, 2, 2, 3, 1, pad}); // both
    check_conv({{1, 4, 4, 4}, 1, 1, 300, 1, 1, 1, 1, 1, pad}); // more channels than one block
    check_conv({{1, 5, 5, 3}, 3, 3, 2, 1, 1, 1, 1, 1, pad}, DType::kF16);
  }
  // A window bigger than the input: VALID gives nothing, SAME still one output.
  check_conv({{1, 2, 2, 1}, 3, 3, 1, 1, 1, 1, 1, 1, "VALID"});
  check_conv({{1, 2, 2, 1}, 3, 3, 1, 2, 2, 1, 1, 1, "SAME"});
}

TEST(Conv2D, GroupsAndDepthwise) {
  for (const std::string pad : {"VALID", "SAME"}) {
    check_conv({{2, 6, 6, 6}, 3, 3, 4, 1, 1, 1, 1, 2, pad});   // 2 groups of 3 -> 2
    check_conv({{1, 6, 7, 4}, 3, 3, 4, 2, 2, 1, 1, 4, pad});   // depthwise
    check_conv({{1, 6, 7, 3}, 3, 3, 6, 1, 1, 2, 2, 3, pad});   // depthwise, multiplier 2
  }
}

void check_pool(bool avg, const Shape& xs, int64_t kh, int64_t kw, int64_t sh, int64_t sw, const std::string& pad,
                DType dt = DType::kF32) {
  SCOPED_TRACE(::testing::Message() << (avg ? "avg " : "max ") << pad << " " << kh << "x" << kw << " /" << sh);
  const Geometry gy = geometry(pad, xs[1], kh, sh, 1), gx = geometry(pad, xs[2], kw, sw, 1);
  HostTensor x = HostTensor::random(dt, xs, 61, -9, 9);
  std::vector<double> want;
  for (int64_t b = 0; b < xs[0]; ++b)
    for (int64_t oy = 0; oy < gy.out; ++oy)
      for (int64_t ox = 0; ox < gx.out; ++ox)
        for (int64_t c = 0; c < xs[3]; ++c) {
          double acc = avg ? 0 : -INFINITY;
          int cells = 0;
          for (int64_t iy = oy * sh - gy.pad_before; iy < oy * sh - gy.pad_before + kh; ++iy)
            for (int64_t ix = ox * sw - gx.pad_before; ix < ox * sw - gx.pad_before + kw; ++ix) {
              if (iy < 0 || iy >= xs[1] || ix < 0 || ix >= xs[2]) continue;
              const double v = x.at(((b * xs[1] + iy) * xs[2] + ix) * xs[3] + c);
              acc = avg ? acc + v : std::max(acc, v);
              ++cells;
            }
          want.push_back(avg ? acc / cells : acc);
        }
  KernelTester(avg ? OpId::AvgPool2D : OpId::MaxPool2D)
      .in(x)
      .out(dt, {xs[0], gy.out, gx.out, xs[3]})
      .attr_ints({kh, kw})
      .attr_ints({sh, sw})
      .attr_string(pad)
      .expect(want, 1e-6);
}

TEST(Pool2D, MaxAndAvgWithPadding) {
  for (bool avg : {false, true})
    for (const std::string pad : {"VALID", "SAME"}) {
      check_pool(avg, {2, 5, 6, 3}, 2, 2, 2, 2, pad);
      check_pool(avg, {1, 7, 7, 2}, 3, 3, 2, 2, pad);
      check_pool(avg, {1, 6, 5, 2}, 3, 2, 1, 1, pad);
      check_pool(avg, {1, 4, 4, 200}, 3, 3, 3, 3, pad);
    }
  check_pool(false, {1, 5, 5, 2}, 2, 2, 2, 2, "SAME", DType::kI32);
}

TEST(Pool2D, AvgSameDividesByCellsInside) {
  // 3x3 input of ones plus a 1 at the corner, 2x2 window, stride 2, SAME: out 2x2,
  // total padding 1 at the bottom/right; the edge windows hold 2 cells, the corner 1.
  KernelTester(OpId::AvgPool2D)
      .in(HostTensor::of(DType::kF32, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))
      .out(DType::kF32, {1, 2, 2, 1})
      .attr_ints({2, 2})
      .attr_ints({2, 2})
      .attr_string("SAME")
      .expect({3, 4.5, 7.5, 9});
  // The stride defaults to the window.
  KernelTester(OpId::MaxPool2D)
      .in(HostTensor::of(DType::kF32, {1, 2, 4, 1}, {1, 5, 2, 0, 3, 4, 8, 7}))
      .out(DType::kF32, {1, 1, 2, 1})
      .attr_ints({2, 2})
      .attr_ints({})
      .attr_string("VALID")
      .expect({5, 8});
}

std::vector<double> layer_norm_reference(const HostTensor& x, const HostTensor& g, const HostTensor& b, double eps) {
  const int64_t d = x.shape().back(), rows = x.numel() / d;
  std::vector<double> want;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += x.at(r * d + i) / double(d);
    for (int64_t i = 0; i < d; ++i) var += (x.at(r * d + i) - mean) * (x.at(r * d + i) - mean) / double(d);
    for (int64_t i = 0; i < d; ++i)
      want.push_back((x.at(r * d + i) - mean) / std::sqrt(var + eps) * g.at(g.numel() == 1 ? 0 : i) +
                     b.at(b.numel() == 1 ? 0 : i));
  }
  return want;
}

TEST(LayerNorm, OverTheLastAxis) {
  for (DType dt : {DType::kF32, DType::kF16}) {
    // An offset mean: a one-pass variance would lose it.
    const HostTensor x = HostTensor::random(dt, {3, 4, 16}, 61, dt == DType::kF32 ? 100 : 10, dt == DType::kF32 ? 104 : 14);
    const HostTensor g = HostTensor::random(dt, {16}, 62), b = HostTensor::random(dt, {16}, 63);
    KernelTester(OpId::LayerNorm).in(x).in(g).in(b).out(dt, {3, 4, 16}).attr_float(1e-5)
        .expect(layer_norm_reference(x, g, b, 1e-5), dt == DType::kF32 ? 1e-5 : 3e-3, 1e-5);
  }
  // Scalar and [1] gamma/beta, and a large eps.
  const HostTensor x = HostTensor::of(DType::kF32, {2, 2}, {1, 3, -2, 2});
  const HostTensor g = HostTensor::scalar(DType::kF32, 2), b = HostTensor::of(DType::kF32, {1}, {0.5});
  KernelTester(OpId::LayerNorm).in(x).in(g).in(b).out(DType::kF32, {2, 2}).attr_float(3)
      .expect({-0.5, 1.5, 0.5 - 4 / std::sqrt(7.0), 0.5 + 4 / std::sqrt(7.0)});  // var 1 and 4, eps 3
  KernelTester(OpId::LayerNorm).in(HostTensor(DType::kF32, {0, 4})).in(HostTensor(DType::kF32, {4}))
      .in(HostTensor(DType::kF32, {4})).out(DType::kF32, {0, 4}).attr_float(1e-5).expect({});
}

}  // namespace
}  // namespace sg::kernels::testing
