// The neural-network kernels: f32 NHWC convolution and pooling (the padding
// rules are the reference kernels': "SAME" puts the odd pixel after) and the
// fused ops' activation; softmax / log_softmax and layer_norm, one warp per lane
// or row (common.cuh), layer_norm's sums in double as the reference's, so
// results stay well inside f32 tolerance.
#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/kernel_util.h"

namespace sg::kernels::cuda {
namespace {

struct Window {
  int64_t in, out, k, stride, dilation, pad_before;
};

Status make_window(const std::string& padding, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation,
                   Window& w) {
  if (k < 1 || stride < 1 || dilation < 1) return internal_error("cuda window: non-positive size");
  const int64_t span = (k - 1) * dilation + 1;
  int64_t total = 0;
  if (padding == "SAME") total = std::max<int64_t>((out - 1) * stride + span - in, 0);
  else if (padding != "VALID") return internal_error("cuda window: padding \"" + padding + "\"");
  w = Window{in, out, k, stride, dilation, total / 2};
  return Status::Ok();
}

int64_t attr_pair(const ops::Attrs& attrs, size_t k, int i) {
  const auto& v = attrs.ints(k);
  return v.empty() ? 1 : v[size_t(i) < v.size() ? i : 0];
}

__device__ __forceinline__ float activate(int64_t act, float v) {
  if (act == ops::attr::kActRelu) return v != v ? v : (v > 0.0f ? v : 0.0f);
  if (act == ops::attr::kActTanh) return tanhf(v);
  return v;
}

// One thread per output element: x NHWC, w HWIO [kh, kw, cin/groups, cout].
__global__ void conv_kernel(const float* x, const float* w, const float* bias, float* o, int64_t batch, int64_t cin,
                            int64_t cout, int64_t groups, Window wy, Window wx, int64_t act) {
  const int64_t total = batch * wy.out * wx.out * cout;
  const int64_t cin_g = cin / groups, cout_g = cout / groups;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t co = i % cout, ox = (i / cout) % wx.out, oy = (i / (cout * wx.out)) % wy.out,
                  n = i / (cout * wx.out * wy.out);
    const int64_t g = co / cout_g;
    float acc = 0.0f;
    for (int64_t ky = 0; ky < wy.k; ++ky) {
      const int64_t iy = oy * wy.stride - wy.pad_before + ky * wy.dilation;
      if (iy < 0 || iy >= wy.in) continue;
      for (int64_t kx = 0; kx < wx.k; ++kx) {
        const int64_t ix = ox * wx.stride - wx.pad_before + kx * wx.dilation;
        if (ix < 0 || ix >= wx.in) continue;
        const float* xp = x + ((n * wy.in + iy) * wx.in + ix) * cin + g * cin_g;
        const float* wp = w + ((ky * wx.k + kx) * cin_g) * cout + co;
        for (int64_t c = 0; c < cin_g; ++c) acc = fmaf(xp[c], wp[c * cout], acc);
      }
    }
    if (bias != nullptr) acc += bias[co];
    o[i] = activate(act, acc);
  }
}

template <bool kMax>
__global__ void pool_kernel(const float* x, float* o, int64_t batch, int64_t channels, Window wy, Window wx) {
  const int64_t total = batch * wy.out * wx.out * channels;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % channels, ox = (i / channels) % wx.out, oy = (i / (channels * wx.out)) % wy.out,
                  n = i / (channels * wx.out * wy.out);
    const int64_t y0 = oy * wy.stride - wy.pad_before, x0 = ox * wx.stride - wx.pad_before;
    const int64_t ylo = y0 > 0 ? y0 : 0, yhi = y0 + wy.k < wy.in ? y0 + wy.k : wy.in;
    const int64_t xlo = x0 > 0 ? x0 : 0, xhi = x0 + wx.k < wx.in ? x0 + wx.k : wx.in;
    double sum = 0;
    float mx = -INFINITY;
    for (int64_t iy = ylo; iy < yhi; ++iy)
      for (int64_t ix = xlo; ix < xhi; ++ix) {
        const float v = x[((n * wy.in + iy) * wx.in + ix) * channels + c];
        if (kMax) mx = (v != v || mx != mx) ? NAN : fmaxf(mx, v);
        else sum += double(v);
      }
    const int64_t cells = (yhi > ylo ? yhi - ylo : 0) * (xhi > xlo ? xhi - xlo : 0);
    o[i] = kMax ? mx : float(sum / double(cells));
  }
}

__global__ void activation_kernel(float* o, int64_t n, int64_t act) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    o[i] = activate(act, o[i]);
}



template <bool kLog>
__global__ void softmax_kernel(const float* x, float* o, int64_t outer, int64_t n, int64_t inner) {
  const int lane = threadIdx.x % 32;
  const int64_t lanes = outer * inner, warps = int64_t(gridDim.x) * kWarpsPerBlock;
  for (int64_t l = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32; l < lanes; l += warps) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    float mx = -INFINITY;
    for (int64_t i = lane; i < n; i += 32) mx = fmaxf(mx, x[base + i * inner]);
    for (int s = 16; s > 0; s >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, s));
    float sum = 0;
    for (int64_t i = lane; i < n; i += 32) sum += expf(x[base + i * inner] - mx);
    sum = warp_sum(sum);
    if (kLog) {
      const float ls = logf(sum);
      for (int64_t i = lane; i < n; i += 32) o[base + i * inner] = (x[base + i * inner] - mx) - ls;
    } else {
      const float inv = 1.0f / sum;
      for (int64_t i = lane; i < n; i += 32) o[base + i * inner] = expf(x[base + i * inner] - mx) * inv;
    }
  }
}

__global__ void layer_norm_kernel(const float* x, const float* g, const float* b, float* o, int64_t rows, int64_t d,
                                  int64_t sg, int64_t sb, double eps) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * kWarpsPerBlock;
  for (int64_t r = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32; r < rows; r += warps) {
    const float* row = x + r * d;
    double s = 0;
    for (int64_t i = lane; i < d; i += 32) s += double(row[i]);
    const double mean = warp_sum(s) / double(d);
    double v = 0;
    for (int64_t i = lane; i < d; i += 32) {
      const double c = double(row[i]) - mean;
      v += c * c;
    }
    const double inv = 1.0 / sqrt(warp_sum(v) / double(d) + eps);
    for (int64_t i = lane; i < d; i += 32)
      o[r * d + i] = float((double(row[i]) - mean) * inv * double(g[i * sg]) + double(b[i * sb]));
  }
}

}  // namespace

Status run_conv2d(Context& ctx, const ops::Attrs& attrs, const TensorRef& x, const TensorRef& w, const TensorRef* bias,
                  int64_t activation, TensorRef& o) {
  using namespace ops::attr;
  if (x.rank != 4 || w.rank != 4 || o.rank != 4) return internal_error("cuda conv2d: ranks");
  const std::string& padding = attrs.s(kConvPadding);
  const int64_t groups = attrs.values.size() > kConvGroups && attrs.i(kConvGroups) > 0 ? attrs.i(kConvGroups) : 1;
  Window wy, wx;
  SG_RETURN_IF_ERROR(make_window(padding, x.shape[1], o.shape[1], w.shape[0], attr_pair(attrs, kConvStride, 0),
                                 attr_pair(attrs, kConvDilation, 0), wy));
  SG_RETURN_IF_ERROR(make_window(padding, x.shape[2], o.shape[2], w.shape[1], attr_pair(attrs, kConvStride, 1),
                                 attr_pair(attrs, kConvDilation, 1), wx));
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  conv_kernel<<<grid_for(n), kBlock, 0, state(ctx).stream>>>(x.as<const float>(), w.as<const float>(),
                                                              bias != nullptr ? bias->as<const float>() : nullptr,
                                                              o.as<float>(), x.shape[0], x.shape[3], o.shape[3], groups,
                                                              wy, wx, activation);
  return launched("conv2d");
}

Status run_pool(Context& ctx, bool max, const ops::Attrs& attrs, const TensorRef& x, TensorRef& o) {
  using namespace ops::attr;
  if (x.rank != 4 || o.rank != 4) return internal_error("cuda pool: ranks");
  const std::string& padding = attrs.s(kPoolPadding);
  Window wy, wx;
  SG_RETURN_IF_ERROR(make_window(padding, x.shape[1], o.shape[1], attr_pair(attrs, kPoolSize, 0),
                                 attr_pair(attrs, kPoolStride, 0), 1, wy));
  SG_RETURN_IF_ERROR(make_window(padding, x.shape[2], o.shape[2], attr_pair(attrs, kPoolSize, 1),
                                 attr_pair(attrs, kPoolStride, 1), 1, wx));
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  if (max) pool_kernel<true><<<grid_for(n), kBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<float>(), x.shape[0], x.shape[3], wy, wx);
  else pool_kernel<false><<<grid_for(n), kBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<float>(), x.shape[0], x.shape[3], wy, wx);
  return launched(max ? "max_pool2d" : "avg_pool2d");
}

Status run_activation(Context& ctx, int64_t activation, TensorRef& o) {
  if (activation == ops::attr::kActNone || o.numel() == 0) return Status::Ok();
  activation_kernel<<<grid_for(o.numel()), kBlock, 0, state(ctx).stream>>>(o.as<float>(), o.numel(), activation);
  return launched("activation");
}


Status run_softmax(Context& ctx, bool log, int axis, const TensorRef& x, TensorRef& o) {
  if (axis < 0 || axis >= x.rank) return internal_error("cuda softmax: axis");
  const AxisView v = axis_view(x, axis);
  if (v.outer * v.inner * v.n == 0) return Status::Ok();
  const unsigned g = warp_grid(v.outer * v.inner);
  if (log) softmax_kernel<true><<<g, 32 * kWarpsPerBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<float>(), v.outer, v.n, v.inner);
  else softmax_kernel<false><<<g, 32 * kWarpsPerBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<float>(), v.outer, v.n, v.inner);
  return launched(log ? "log_softmax" : "softmax");
}

Status run_layer_norm(Context& ctx, double eps, const TensorRef& x, const TensorRef& g, const TensorRef& b,
                      TensorRef& o) {
  if (x.rank < 1) return internal_error("cuda layer_norm: rank 0");
  const int64_t d = x.shape[x.rank - 1];
  if (d == 0 || x.numel() == 0) return Status::Ok();
  const int64_t rows = x.numel() / d;
  layer_norm_kernel<<<warp_grid(rows), 32 * kWarpsPerBlock, 0, state(ctx).stream>>>(
      x.as<const float>(), g.as<const float>(), b.as<const float>(), o.as<float>(), rows, d, g.numel() == 1 ? 0 : 1,
      b.numel() == 1 ? 0 : 1, eps);
  return launched("layer_norm");
}

}  // namespace sg::kernels::cuda
