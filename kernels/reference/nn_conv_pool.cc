// conv2d (NHWC input, HWIO filter, groups) and max/avg pooling, with TensorFlow's
// "SAME"/"VALID" padding (SPEC §7).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "interface/binary_ops.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

// Output channels accumulated at once, on the stack.
constexpr int64_t kChannelBlock = 128;

template <DType T>
void conv_loops(const TensorRef& x, const TensorRef& w, TensorRef& o, const Window& wy,
                const Window& wx, int64_t groups) {
  const Storage<T>* px = x.as<Storage<T>>();
  const Storage<T>* pw = w.as<Storage<T>>();
  Storage<T>* po = o.as<Storage<T>>();
  const int64_t batch = x.shape[0], cin = x.shape[3], cout = o.shape[3];
  const int64_t cin_g = cin / groups, cout_g = cout / groups;
  float acc[kChannelBlock];
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oy = 0; oy < wy.out; ++oy)
      for (int64_t ox = 0; ox < wx.out; ++ox) {
        const int64_t y0 = oy * wy.stride - wy.pad_before, x0 = ox * wx.stride - wx.pad_before;
        Storage<T>* out_px = po + ((n * wy.out + oy) * wx.out + ox) * cout;
        for (int64_t g = 0; g < groups; ++g)
          for (int64_t c0 = 0; c0 < cout_g; c0 += kChannelBlock) {
            const int64_t nb = std::min(kChannelBlock, cout_g - c0);
            std::fill(acc, acc + nb, 0.0f);
            for (int64_t ky = 0; ky < wy.k; ++ky) {
              const int64_t iy = y0 + ky * wy.dilation;
              if (iy < 0 || iy >= wy.in) continue;
              for (int64_t kx = 0; kx < wx.k; ++kx) {
                const int64_t ix = x0 + kx * wx.dilation;
                if (ix < 0 || ix >= wx.in) continue;
                const Storage<T>* xin = px + ((n * wy.in + iy) * wx.in + ix) * cin + g * cin_g;
                const Storage<T>* wk = pw + (ky * wx.k + kx) * cin_g * cout + g * cout_g + c0;
                for (int64_t ci = 0; ci < cin_g; ++ci) {
                  const float xv = load<T>(xin[ci]);
                  const Storage<T>* wrow = wk + ci * cout;
                  for (int64_t j = 0; j < nb; ++j) acc[j] += xv * float(load<T>(wrow[j]));
                }
              }
            }
            for (int64_t j = 0; j < nb; ++j) out_px[g * cout_g + c0 + j] = store<T>(acc[j]);
          }
      }
}

Status conv2d_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  using namespace ops::attr;
  SG_RETURN_IF_ERROR(check_arity("conv2d", in, 2, out));
  const TensorRef& x = in[0];
  const TensorRef& w = in[1];
  TensorRef& o = out[0];
  if (attrs.values.size() < 4) return internal_error("conv2d: missing attributes");
  const int64_t groups = attrs.i(kConvGroups);
  auto bad = [&] {
    return internal_error("conv2d: " + describe(x) + " with filter " + describe(w) + " -> " + describe(o));
  };
  if (x.rank != 4 || w.rank != 4 || o.rank != 4 || groups < 1 || x.dtype != w.dtype || o.dtype != x.dtype)
    return bad();
  if (x.shape[3] != w.shape[2] * groups || w.shape[3] != o.shape[3] || o.shape[3] % groups != 0 ||
      o.shape[0] != x.shape[0])
    return bad();
  if (!is_float(x.dtype)) return unsupported("conv2d: " + describe(x) + " (only f32 and f16)");
  Window wy, wx;
  const std::string& padding = attrs.s(kConvPadding);
  SG_RETURN_IF_ERROR(make_window("conv2d", padding, x.shape[1], o.shape[1], w.shape[0],
                                 attr_pair(attrs, kConvStride, 0), attr_pair(attrs, kConvDilation, 0), wy));
  SG_RETURN_IF_ERROR(make_window("conv2d", padding, x.shape[2], o.shape[2], w.shape[1],
                                 attr_pair(attrs, kConvStride, 1), attr_pair(attrs, kConvDilation, 1), wx));
  if (x.dtype == DType::kF32) conv_loops<DType::kF32>(x, w, o, wy, wx, groups);
  else conv_loops<DType::kF16>(x, w, o, wy, wx, groups);
  return Status::Ok();
}

// Padding cells are never read: max ignores them, avg divides by the cells inside.
template <bool kAvg, DType T>
void pool_loops(const TensorRef& x, TensorRef& o, const Window& wy, const Window& wx) {
  using Acc = std::conditional_t<kAvg, double, Compute<T>>;
  const Storage<T>* px = x.as<Storage<T>>();
  Storage<T>* po = o.as<Storage<T>>();
  const int64_t batch = x.shape[0], channels = x.shape[3];
  Acc acc[kChannelBlock];
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oy = 0; oy < wy.out; ++oy)
      for (int64_t ox = 0; ox < wx.out; ++ox) {
        const int64_t y0 = oy * wy.stride - wy.pad_before, x0 = ox * wx.stride - wx.pad_before;
        const int64_t ylo = std::max<int64_t>(y0, 0), yhi = std::min(y0 + wy.k, wy.in);
        const int64_t xlo = std::max<int64_t>(x0, 0), xhi = std::min(x0 + wx.k, wx.in);
        const int64_t cells = std::max<int64_t>(yhi - ylo, 0) * std::max<int64_t>(xhi - xlo, 0);
        Storage<T>* out_px = po + ((n * wy.out + oy) * wx.out + ox) * channels;
        for (int64_t c0 = 0; c0 < channels; c0 += kChannelBlock) {
          const int64_t nb = std::min(kChannelBlock, channels - c0);
          if constexpr (kAvg) std::fill(acc, acc + nb, Acc(0));
          else if constexpr (std::is_floating_point_v<Acc>) std::fill(acc, acc + nb, -std::numeric_limits<Acc>::infinity());
          else std::fill(acc, acc + nb, std::numeric_limits<Acc>::lowest());
          for (int64_t iy = ylo; iy < yhi; ++iy)
            for (int64_t ix = xlo; ix < xhi; ++ix) {
              const Storage<T>* xin = px + ((n * wy.in + iy) * wx.in + ix) * channels + c0;
              for (int64_t j = 0; j < nb; ++j) {
                if constexpr (kAvg) acc[j] += double(load<T>(xin[j]));
                else acc[j] = binary::Maximum::apply<Acc>(load<T>(xin[j]), acc[j]);
              }
            }
          for (int64_t j = 0; j < nb; ++j) {
            if constexpr (kAvg) out_px[c0 + j] = store<T>(acc[j] / double(cells));
            else out_px[c0 + j] = store<T>(acc[j]);
          }
        }
      }
}

template <bool kAvg>
Status pool_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  using namespace ops::attr;
  const char* name = kAvg ? "avg_pool2d" : "max_pool2d";
  SG_RETURN_IF_ERROR(check_arity(name, in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.size() < 3) return internal_error(std::string(name) + ": missing attributes");
  if (x.rank != 4 || o.rank != 4 || x.dtype != o.dtype || x.shape[0] != o.shape[0] || x.shape[3] != o.shape[3])
    return operand_mismatch(name, x, o);
  if (kAvg && !is_float(x.dtype))
    return unsupported(std::string(name) + ": " + describe(x) + " (only f32 and f16)");
  Window wy, wx;
  const std::string& padding = attrs.s(kPoolPadding);
  // The stride defaults to the window (SPEC §7).
  const bool strided = !attrs.ints(kPoolStride).empty();
  const int64_t ky = attr_pair(attrs, kPoolSize, 0), kx = attr_pair(attrs, kPoolSize, 1);
  SG_RETURN_IF_ERROR(make_window(name, padding, x.shape[1], o.shape[1], ky,
                                 strided ? attr_pair(attrs, kPoolStride, 0) : ky, 1, wy));
  SG_RETURN_IF_ERROR(make_window(name, padding, x.shape[2], o.shape[2], kx,
                                 strided ? attr_pair(attrs, kPoolStride, 1) : kx, 1, wx));
  visit_dtype(x.dtype, [&](auto t) {
    constexpr DType T = decltype(t)::value;
    if constexpr (!kAvg || is_float(T)) pool_loops<kAvg, T>(x, o, wy, wx);
  });
  return Status::Ok();
}

}  // namespace

KernelFn conv_pool_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Conv2D: SG_RETURN_IF_SELECTED(Conv2D, conv2d_kernel);
    case ops::OpId::MaxPool2D: SG_RETURN_IF_SELECTED(MaxPool2D, pool_kernel<false>);
    case ops::OpId::AvgPool2D: SG_RETURN_IF_SELECTED(AvgPool2D, pool_kernel<true>);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
