// conv2d and conv2d_bias (constant HWIO filter, repacked once to XNNPACK's OHWI;
// constant bias and relu inside the operator, exact while OverflowBound holds,
// see xnn_common.h) and max/avg pooling on XNNPACK NHWC operators. "SAME"
// padding uses XNNPACK's TensorFlow SAME mode, which recomputes the padding for
// each input size by the rule of SPEC §7 (total max((out-1)*stride + (k-1)*dilation
// + 1 - in, 0), the odd one after); average pooling divides by the cells inside
// the input, as SPEC asks.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "xnnpack/xnn_common.h"

namespace sg::kernels::xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// One [kh, kw], [sh, sw] style attribute entry, as the reference kernel reads it.
int64_t attr_pair(const ops::Attrs& attrs, size_t k, int i) {
  const auto& v = attrs.ints(k);
  return v.empty() ? 1 : v[size_t(i) < v.size() ? size_t(i) : 0];
}

bool fits_u32(int64_t v) { return v >= 1 && v <= int64_t(std::numeric_limits<uint32_t>::max()); }

// Checks the NHWC operands against the window; true when there is work to do.
Status check_nhwc(const char* op, const TensorRef& x, const TensorRef& o, const Window2D& w, int64_t cout,
                  bool& has_work) {
  const bool ok = is_f32(x) && is_f32(o) && x.rank == 4 && o.rank == 4 && o.shape[0] == x.shape[0] &&
                  o.shape[3] == cout && o.shape[1] == output_size(x.shape[1], w.kh, w.sh, w.dh, w.same) &&
                  o.shape[2] == output_size(x.shape[2], w.kw, w.sw, w.dw, w.same);
  if (!ok) return internal_error(std::string(op) + ": " + describe_shape(x) + " -> " + describe_shape(o));
  has_work = o.numel() != 0;
  return Status::Ok();
}

// ---- conv2d ------------------------------------------------------------------

// What the operator was last set up with: setup is redone only when it changes
// (XNNPACK then also keeps its indirection buffer).
struct ConvSetup {
  size_t n = 0, h = 0, w = 0;
  const float* input = nullptr;
  float* output = nullptr;
  void* pool = nullptr;
  bool operator==(const ConvSetup&) const = default;
};

class Conv2DKernel final : public PreparedKernel {
 public:
  Conv2DKernel(Operator op, ops::OpId id, const ops::Attrs& attrs, Window2D w, int64_t cin, int64_t cout, size_t bytes,
               OverflowBound bound, std::string name)
      : op_(std::move(op)), id_(id), attrs_(attrs), w_(w), cin_(cin), cout_(cout), bytes_(bytes), bound_(bound),
        name_(std::move(name)), isa_(simd::best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    const bool fused = id_ == ops::OpId::Conv2DBias;
    const char* op_name = fused ? "conv2d_bias" : "conv2d";
    if (in.size() != (fused ? 3u : 2u) || out.size() != 1)
      return internal_error(std::string(op_name) + ": wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    bool has_work = false;
    SG_RETURN_IF_ERROR(check_nhwc(op_name, x, o, w_, cout_, has_work));
    if (x.shape[3] != cin_ || (fused && (in[2].rank != 1 || in[2].shape[0] != cout_)))
      return internal_error(std::string(op_name) + ": input " + describe_shape(x) + " for " + std::to_string(cin_) +
                            " input channels");
    if (!has_work) return Status::Ok();
    if (!bound_.safe(max_magnitude(x.as<const float>(), size_t(x.numel()), isa_)))
      return run_reference(id_, attrs_, ctx, in, out);
    const pthreadpool_t pool = pool_for(ctx, 2.0 * double(o.numel()) * double(w_.kh * w_.kw * cin_));
    const ConvSetup now{size_t(x.shape[0]), size_t(x.shape[1]), size_t(x.shape[2]), x.as<const float>(), o.as<float>(),
                        pool};
    if (!(now == setup_)) {
      setup_ = ConvSetup{};
      SG_RETURN_IF_ERROR(check(
          xnn_setup_convolution2d_nhwc_f32(op_.get(), now.n, now.h, now.w, now.input, now.output, pool), "conv2d setup"));
      setup_ = now;
    }
    return check(xnn_run_operator(op_.get(), pool), op_name);
  }
  bool needs_pool() const override { return true; }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return bytes_; }

 private:
  Operator op_;
  ops::OpId id_;      // conv2d or conv2d_bias, for the reference kernel
  ops::Attrs attrs_;
  Window2D w_;
  int64_t cin_, cout_;
  size_t bytes_;
  OverflowBound bound_;
  std::string name_;
  simd::Isa isa_;
  ConvSetup setup_;
};

// ---- pooling -----------------------------------------------------------------

// The channel count is fixed at creation: the operator is made on the first run
// and again when the channel count changes.
class PoolKernel final : public PreparedKernel {
 public:
  PoolKernel(bool avg, const ops::Attrs& attrs, Window2D w)
      : avg_(avg), attrs_(attrs), w_(w), isa_(simd::best_isa()) {}

  // Creates the operator for `channels`; also used at prepare time to learn
  // whether XNNPACK takes this window at all.
  Status create(size_t channels) {
    xnn_operator_t p = nullptr;
    const uint32_t flags = w_.same ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0;
    const xnn_status s =
        avg_ ? xnn_create_average_pooling2d_nhwc_f32(0, 0, 0, 0, uint32_t(w_.kh), uint32_t(w_.kw), uint32_t(w_.sh),
                                                     uint32_t(w_.sw), channels, channels, channels, -kInf, kInf,
                                                     flags, &p)
             : xnn_create_max_pooling2d_nhwc_f32(0, 0, 0, 0, uint32_t(w_.kh), uint32_t(w_.kw), uint32_t(w_.sh),
                                                 uint32_t(w_.sw), 1, 1, channels, channels, channels, -kInf, kInf,
                                                 flags, &p);
    SG_RETURN_IF_ERROR(check(s, avg_ ? "avg_pool2d creation" : "max_pool2d creation"));
    op_.reset(p);
    channels_ = channels;
    return Status::Ok();
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    const char* op_name = avg_ ? "avg_pool2d" : "max_pool2d";
    if (in.size() != 1 || out.size() != 1) return internal_error(std::string(op_name) + ": wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    bool has_work = false;
    SG_RETURN_IF_ERROR(check_nhwc(op_name, x, o, w_, x.rank == 4 ? x.shape[3] : -1, has_work));
    if (!has_work) return Status::Ok();
    const ops::OpId id = avg_ ? ops::OpId::AvgPool2D : ops::OpId::MaxPool2D;
    // XNNPACK's max pooling skips NaN: such inputs (and, as the vectorized scan
    // finds NaN and infinities together, infinite ones) go to the reference.
    if (!avg_ && !std::isfinite(max_magnitude(x.as<const float>(), size_t(x.numel()), isa_)))
      return run_reference(id, attrs_, ctx, in, out);
    const size_t channels = size_t(x.shape[3]);
    if (op_ == nullptr || channels != channels_) SG_RETURN_IF_ERROR(create(channels));
    const size_t n = size_t(x.shape[0]), h = size_t(x.shape[1]), wd = size_t(x.shape[2]);
    const pthreadpool_t pool = pool_for(ctx, double(o.numel()) * double(w_.kh * w_.kw));
    const xnn_status s =
        avg_ ? xnn_setup_average_pooling2d_nhwc_f32(op_.get(), n, h, wd, x.as<const float>(), o.as<float>(), pool)
             : xnn_setup_max_pooling2d_nhwc_f32(op_.get(), n, h, wd, x.as<const float>(), o.as<float>(), pool);
    SG_RETURN_IF_ERROR(check(s, avg_ ? "avg_pool2d setup" : "max_pool2d setup"));
    SG_RETURN_IF_ERROR(check(xnn_run_operator(op_.get(), pool), op_name));
    if (avg_ && has_nan_or_neg_inf(o.as<const float>(), size_t(o.numel()))) return run_reference(id, attrs_, ctx, in, out);
    return Status::Ok();
  }
  bool needs_pool() const override { return true; }
  const char* name() const override {
    return avg_ ? "xnnpack:average_pooling2d_nhwc_f32" : "xnnpack:max_pooling2d_nhwc_f32";
  }

 private:
  bool avg_;
  ops::Attrs attrs_;  // for the reference kernel
  Window2D w_;
  simd::Isa isa_;
  Operator op_;
  size_t channels_ = 0;
};

bool padding_mode(const std::string& s, bool& same) {
  if (s == "SAME") same = true;
  else if (s == "VALID") same = false;
  else return false;
  return true;
}

}  // namespace

std::unique_ptr<PreparedKernel> make_conv2d(const ops::Attrs& attrs, std::span<const InputInfo> in) {
  using namespace ops::attr;
  const bool fused = in.size() == 3;
  if ((in.size() != 2 && !fused) || attrs.values.size() != (fused ? 5u : 4u)) return nullptr;
  const InputInfo &x = in[0], &f = in[1];
  if (!is_f32(x) || !is_f32(f) || x.rank != 4 || f.rank != 4) return nullptr;
  const int64_t activation = fused ? attrs.i(kConvActivation) : kActNone;
  if (activation != kActNone && activation != kActRelu) return nullptr;
  // A run-time filter takes its bias at run time too (our GEMM adds it in its store).
  if (fused && (!is_f32(in[2]) || in[2].rank != 1 || in[2].shape[0] != f.shape[3] ||
                (in[2].constant == nullptr && f.constant != nullptr)))
    return nullptr;
  Window2D w{f.shape[0], f.shape[1], attr_pair(attrs, kConvStride, 0), attr_pair(attrs, kConvStride, 1),
             attr_pair(attrs, kConvDilation, 0), attr_pair(attrs, kConvDilation, 1), false};
  if (!padding_mode(attrs.s(kConvPadding), w.same)) return nullptr;
  const int64_t groups = attrs.i(kConvGroups), cin_g = f.shape[2], cout = f.shape[3];
  for (int64_t v : {w.kh, w.kw, w.sh, w.sw, w.dh, w.dw, groups, cin_g, cout})
    if (!fits_u32(v)) return nullptr;  // empty filters give zeros: the reference kernel does that
  if (cout % groups != 0 || (x.shape[3] >= 0 && x.shape[3] != cin_g * groups)) return nullptr;
  const int64_t cout_g = cout / groups;
  // XNNPACK's operator packs its filter once: a run-time filter goes to our GEMM.
  if (f.constant == nullptr) {
    if (auto gemm = make_conv_gemm_run_time(attrs, in, w, groups, activation)) return gemm;
    return make_depthwise_run_time(attrs, in, w, groups, activation);
  }
  if (auto ours = make_conv_gemm(attrs, in, w, groups, activation)) return ours;

  // HWIO [kh][kw][cin_g][cout] -> OHWI [cout][kh][kw][cin_g]; with groups, output
  // channel o = g*cout_g + j belongs to group g in both layouts.
  const float* hwio = static_cast<const float*>(f.constant);
  const float* bias = fused ? static_cast<const float*>(in[2].constant) : nullptr;
  const int64_t taps = w.kh * w.kw;
  const std::unique_ptr<float[]> ohwi = try_floats(size_t(taps * cin_g * cout));
  if (!ohwi) return nullptr;  // the reference kernel reads the filter in place
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t co = 0; co < cout; ++co) ohwi[size_t((co * taps + t) * cin_g + ci)] = hwio[(t * cin_g + ci) * cout + co];

  xnn_operator_t p = nullptr;
  const xnn_status s = xnn_create_convolution2d_nhwc_f32(
      0, 0, 0, 0, uint32_t(w.kh), uint32_t(w.kw), uint32_t(w.sh), uint32_t(w.sw), uint32_t(w.dh), uint32_t(w.dw),
      uint32_t(groups), size_t(cin_g), size_t(cout_g), size_t(cin_g * groups), size_t(cout), ohwi.get(), bias,
      activation == kActRelu ? 0.0f : -kInf, kInf, w.same ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0, &p);
  if (s != xnn_status_success) return nullptr;
  std::string name = "xnnpack:convolution2d_nhwc_f32";
  if (fused) name += "+bias";
  if (activation == kActRelu) name += "+relu";
  // The packed filter and bias (XNNPACK rounds the channels up to its tile).
  const size_t bytes = size_t(taps * cin_g * cout + cout) * sizeof(float);
  return std::make_unique<Conv2DKernel>(Operator(p), fused ? ops::OpId::Conv2DBias : ops::OpId::Conv2D, attrs, w,
                                        cin_g * groups, cout, bytes,
                                        OverflowBound::of(hwio, size_t(taps * cin_g), size_t(cout), bias),
                                        std::move(name));
}

std::unique_ptr<PreparedKernel> make_pool(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in) {
  using namespace ops::attr;
  if (in.size() != 1 || attrs.values.size() < 3 || !is_f32(in[0]) || in[0].rank != 4) return nullptr;
  const bool strided = !attrs.ints(kPoolStride).empty();
  Window2D w{attr_pair(attrs, kPoolSize, 0), attr_pair(attrs, kPoolSize, 1), 0, 0, 1, 1, false};
  w.sh = strided ? attr_pair(attrs, kPoolStride, 0) : w.kh;
  w.sw = strided ? attr_pair(attrs, kPoolStride, 1) : w.kw;
  if (!padding_mode(attrs.s(kPoolPadding), w.same)) return nullptr;
  for (int64_t v : {w.kh, w.kw, w.sh, w.sw})
    if (!fits_u32(v)) return nullptr;
  if (op == ops::OpId::MaxPool2D)
    if (auto ours = make_max_pool(w)) return ours;
  auto kernel = std::make_unique<PoolKernel>(op == ops::OpId::AvgPool2D, attrs, w);
  // XNNPACK refuses some windows (1x1); learn it now, with the real channel
  // count when it is static.
  const int64_t c = in[0].shape[3];
  if (!kernel->create(c > 0 ? size_t(c) : 1).ok()) return nullptr;
  return kernel;
}

}  // namespace sg::kernels::xnn
