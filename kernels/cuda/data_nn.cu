// Data movement (transpose, take, concatenate, copies) for any dtype, moved as
// words of its size, and the f32 NHWC convolution and pooling kernels. The
// padding rules are the reference kernels' ("SAME": the odd pixel after).
#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/kernel_util.h"

namespace sg::kernels::cuda {
namespace {

template <class W>
__global__ void transpose_kernel(const W* x, W* o, int64_t n, Strided<1> s) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t j = i, off = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      off += (j % s.shape[d]) * s.strides[0][d];
      j /= s.shape[d];
    }
    o[i] = x[off];
  }
}

// o[a, i, b] = x[a, idx[i], b] over x seen as [outer, n, inner].
template <class W, class I>
__global__ void take_kernel(const W* x, const I* idx, W* o, int64_t outer, int64_t n, int64_t inner, int64_t count,
                            int* error) {
  const int64_t total = outer * count * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i % inner, k = (i / inner) % count, a = i / (inner * count);
    int64_t j = int64_t(idx[k]);
    if (j < -n || j >= n) {
      atomicCAS(error, 0, int(kTakeIndexOutOfRange));
      o[i] = W(0);
      continue;
    }
    if (j < 0) j += n;
    o[i] = x[(a * n + j) * inner + b];
  }
}

// One input's block [outer, rows] into the output [outer, total] at column `at`.
template <class W>
__global__ void place_kernel(const W* x, W* o, int64_t outer, int64_t rows, int64_t total, int64_t at) {
  const int64_t n = outer * rows;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    o[(i / rows) * total + at + i % rows] = x[i];
}

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


}  // namespace

Status run_transpose(Context& ctx, const std::vector<int64_t>& perm, const TensorRef& x, TensorRef& o) {
  if (int(perm.size()) != x.rank) return internal_error("cuda transpose: permutation");
  Strided<1> s;
  s.rank = x.rank;
  int64_t in_strides[kMaxRank];
  int64_t st = 1;
  for (int d = x.rank - 1; d >= 0; --d) {
    in_strides[d] = st;
    st *= x.shape[d];
  }
  for (int d = 0; d < x.rank; ++d) {
    s.shape[d] = o.shape[d];
    s.strides[0][d] = in_strides[perm[d]];
  }
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  const unsigned g = grid_for(n);
  cudaStream_t stream = state(ctx).stream;
  switch (dtype_size(x.dtype)) {
    case 1: transpose_kernel<uint8_t><<<g, kBlock, 0, stream>>>(x.as<const uint8_t>(), o.as<uint8_t>(), n, s); break;
    case 2: transpose_kernel<uint16_t><<<g, kBlock, 0, stream>>>(x.as<const uint16_t>(), o.as<uint16_t>(), n, s); break;
    case 4: transpose_kernel<uint32_t><<<g, kBlock, 0, stream>>>(x.as<const uint32_t>(), o.as<uint32_t>(), n, s); break;
    default: transpose_kernel<uint64_t><<<g, kBlock, 0, stream>>>(x.as<const uint64_t>(), o.as<uint64_t>(), n, s); break;
  }
  return launched("transpose");
}

template <class W>
static void launch_take(unsigned g, cudaStream_t st, const TensorRef& x, const TensorRef& idx, TensorRef& o,
                        const AxisView& v, int64_t count, int* err) {
  if (idx.dtype == DType::kI64)
    take_kernel<W, int64_t><<<g, kBlock, 0, st>>>(x.as<const W>(), idx.as<const int64_t>(), o.as<W>(), v.outer, v.n, v.inner, count, err);
  else
    take_kernel<W, int32_t><<<g, kBlock, 0, st>>>(x.as<const W>(), idx.as<const int32_t>(), o.as<W>(), v.outer, v.n, v.inner, count, err);
}

Status run_take(Context& ctx, int axis, const TensorRef& x, const TensorRef& idx, TensorRef& o) {
  if (axis < 0 || axis >= x.rank) return internal_error("cuda take: axis");
  const AxisView v = axis_view(x, axis);
  const int64_t count = idx.numel();
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  if (v.n == 0) return runtime_error("take: index out of range (axis " + std::to_string(axis) + " is empty)");
  const unsigned g = grid_for(n);
  cudaStream_t st = state(ctx).stream;
  int* err = state(ctx).error_flag;
  switch (dtype_size(x.dtype)) {
    case 1: launch_take<uint8_t>(g, st, x, idx, o, v, count, err); break;
    case 2: launch_take<uint16_t>(g, st, x, idx, o, v, count, err); break;
    case 4: launch_take<uint32_t>(g, st, x, idx, o, v, count, err); break;
    default: launch_take<uint64_t>(g, st, x, idx, o, v, count, err); break;
  }
  return launched("take");
}

Status run_concatenate(Context& ctx, int axis, std::span<const TensorRef> in, TensorRef& o) {
  if (axis < 0 || axis >= o.rank) return internal_error("cuda concatenate: axis");
  const AxisView ov = axis_view(o, axis);
  const int64_t total = ov.n * ov.inner;
  int64_t at = 0;
  cudaStream_t st = state(ctx).stream;
  for (const TensorRef& x : in) {
    const int64_t rows = x.shape[axis] * ov.inner;
    const int64_t n = ov.outer * rows;
    if (n > 0) {
      const unsigned g = grid_for(n);
      switch (dtype_size(o.dtype)) {
        case 1: place_kernel<uint8_t><<<g, kBlock, 0, st>>>(x.as<const uint8_t>(), o.as<uint8_t>(), ov.outer, rows, total, at); break;
        case 2: place_kernel<uint16_t><<<g, kBlock, 0, st>>>(x.as<const uint16_t>(), o.as<uint16_t>(), ov.outer, rows, total, at); break;
        case 4: place_kernel<uint32_t><<<g, kBlock, 0, st>>>(x.as<const uint32_t>(), o.as<uint32_t>(), ov.outer, rows, total, at); break;
        default: place_kernel<uint64_t><<<g, kBlock, 0, st>>>(x.as<const uint64_t>(), o.as<uint64_t>(), ov.outer, rows, total, at); break;
      }
      SG_RETURN_IF_ERROR(launched("concatenate"));
    }
    at += rows;
  }
  return Status::Ok();
}

Status run_copy(Context& ctx, const TensorRef& x, TensorRef& o) {
  if (x.nbytes() != o.nbytes()) return internal_error("cuda copy: sizes differ");
  if (x.data == o.data || o.nbytes() == 0) return Status::Ok();
  SG_CUDA_TRY(cudaMemcpyAsync(o.data, x.data, o.nbytes(), cudaMemcpyDeviceToDevice, state(ctx).stream), "copy");
  return Status::Ok();
}

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

}  // namespace sg::kernels::cuda
