// Elementwise f32 ops on XNNPACK operators: unary ops over the flat tensor and
// softmax over the last axis. (Binary ops are ours, in binary.cc: XNNPACK's clamp
// to [-inf, inf] turns NaN results such as 0/0 into -inf.)
#include <cmath>
#include <limits>
#include <string>

#include "xnnpack/xnn_common.h"

namespace sg::kernels::xnn {
namespace {

Status check_same_size(const char* op, const TensorRef& x, const TensorRef& o) {
  if (!is_f32(x) || !is_f32(o) || x.numel() != o.numel())
    return internal_error(std::string(op) + ": " + describe_shape(x) + " -> " + describe_shape(o));
  return Status::Ok();
}

// ---- unary -------------------------------------------------------------------

using UnarySetup = xnn_status (*)(xnn_operator_t, size_t, const float*, float*, pthreadpool_t);

// XNNPACK runs every operator with denormals off (xnn_run_operator passes
// PTHREADPOOL_FLAG_DISABLE_DENORMALS): a subnormal input reads as zero and a
// subnormal result is stored as zero. NumPy keeps them, and for some ops the
// difference is more than rounding: floor(-1e-40) is -1 and ceil(1e-40) is 1
// (XNNPACK: -0 and 0), sqrt(-1e-40) is NaN and sqrt(1e-40) 1e-20 (XNNPACK: -0, 0),
// square(3e-20) is 9e-40 and sigmoid(-88) 6e-39 (XNNPACK: 0). An input in the op's
// flush range, 0 < |x| < tiny or x < low, sends the node to the reference kernel.
struct FlushRange {
  float tiny = 0;                                       // |x| below this reads or squares to a subnormal
  float low = -std::numeric_limits<float>::infinity();  // x below this gives a subnormal result
};

bool meets_flush_range(const float* p, size_t n, FlushRange r) {
  using simd::V4;
  using I4 = simd::IntOf<V4>;
  const V4 tiny = simd::splat<V4>(r.tiny), low = simd::splat<V4>(r.low), zero = simd::splat<V4>(0.0f);
  I4 hit{};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 v = simd::load<V4>(p + i);
    const V4 a = simd::bit_cast<V4>(simd::bit_cast<I4>(v) & 0x7fffffff);
    hit |= ((a < tiny) & (a > zero)) | (v < low);
  }
  bool found = (hit[0] | hit[1] | hit[2] | hit[3]) != 0;
  for (; i < n; ++i) found |= (std::fabs(p[i]) < r.tiny && p[i] != 0) || p[i] < r.low;
  return found;
}

// A unary op sees the tensor as `numel` rows of one channel: XNNPACK runs rows of
// a contiguous tensor as one flat vector, so this costs nothing over [n, c].
class UnaryKernel final : public PreparedKernel {
 public:
  UnaryKernel(Operator op, UnarySetup setup, const char* name, ops::OpId id, std::optional<FlushRange> flush)
      : op_(std::move(op)), setup_(setup), name_(name), id_(id), flush_(flush) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 1 || out.size() != 1) return internal_error(std::string(name_) + ": wrong operand count");
    SG_RETURN_IF_ERROR(check_same_size(name_, in[0], out[0]));
    const int64_t n = out[0].numel();
    if (n == 0) return Status::Ok();
    if (flush_ && meets_flush_range(in[0].as<const float>(), size_t(n), *flush_))
      return run_reference(id_, ops::Attrs{}, ctx, in, out);
    SG_RETURN_IF_ERROR(check(setup_(op_.get(), size_t(n), in[0].as<const float>(), out[0].as<float>(), pool_of(ctx)), name_));
    return check(xnn_run_operator(op_.get(), pool_of(ctx)), name_);
  }
  bool needs_pool() const override { return true; }
  const char* name() const override { return name_; }

 private:
  Operator op_;
  UnarySetup setup_;
  const char* name_;
  ops::OpId id_;                     // for the reference kernel
  std::optional<FlushRange> flush_;  // none: flushing never shows in this op's results
};

using UnaryCreate = xnn_status (*)(size_t, size_t, size_t, uint32_t, xnn_operator_t*);

std::unique_ptr<PreparedKernel> make_simple_unary(UnaryCreate create, UnarySetup setup, const char* name,
                                                  ops::OpId id, std::optional<FlushRange> flush = std::nullopt) {
  xnn_operator_t op = nullptr;
  if (create(1, 1, 1, 0, &op) != xnn_status_success) return nullptr;
  return std::make_unique<UnaryKernel>(Operator(op), setup, name, id, flush);
}

// ---- softmax -----------------------------------------------------------------

// XNNPACK's softmax fixes the channel count at creation: the operator is made on
// the first run and again whenever the last dim changes.
class SoftmaxKernel final : public PreparedKernel {
 public:
  explicit SoftmaxKernel(const ops::Attrs& attrs) : attrs_(attrs) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 1 || out.size() != 1) return internal_error("softmax: wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    SG_RETURN_IF_ERROR(check_same_size("softmax", x, o));
    if (x.rank < 1 || x.numel() == 0) return Status::Ok();
    const size_t channels = size_t(x.shape[x.rank - 1]);
    if (op_ == nullptr || channels != channels_) {
      xnn_operator_t op = nullptr;
      SG_RETURN_IF_ERROR(check(xnn_create_softmax_nc_f32(channels, channels, channels, 0, &op), "softmax creation"));
      op_.reset(op);
      channels_ = channels;
    }
    const size_t rows = size_t(x.numel()) / channels;
    SG_RETURN_IF_ERROR(check(xnn_setup_softmax_nc_f32(op_.get(), rows, x.as<const float>(), o.as<float>(), pool_of(ctx)),
                             "softmax setup"));
    SG_RETURN_IF_ERROR(check(xnn_run_operator(op_.get(), pool_of(ctx)), "softmax"));
    // Probabilities are never NaN or -inf unless an input was NaN or +inf, where
    // XNNPACK gives -inf and NumPy NaN.
    if (has_nan_or_neg_inf(o.as<const float>(), size_t(o.numel())))
      return run_reference(ops::OpId::Softmax, attrs_, ctx, in, out);
    return Status::Ok();
  }
  bool needs_pool() const override { return true; }
  const char* name() const override { return "xnnpack:softmax_nc_f32"; }

 private:
  ops::Attrs attrs_;  // for the reference kernel
  Operator op_;
  size_t channels_ = 0;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_unary(ops::OpId op, std::span<const InputInfo> in) {
  if (in.size() != 1 || !is_f32(in[0])) return nullptr;
  using ops::OpId;
  // Flush ranges: subnormal inputs (floor, ceil, sqrt), inputs whose square is
  // subnormal (below 2^-63), sigmoid's tail below -87 (e^-87.34 is FLT_MIN).
  // abs and negate only move bits; round gives +-0 for subnormals either way.
  const FlushRange subnormal{std::numeric_limits<float>::min()};
  switch (op) {
    case OpId::Abs:
      return make_simple_unary(xnn_create_abs_nc_f32, xnn_setup_abs_nc_f32, "xnnpack:abs_nc_f32", op);
    case OpId::Neg:
      return make_simple_unary(xnn_create_negate_nc_f32, xnn_setup_negate_nc_f32, "xnnpack:negate_nc_f32", op);
    case OpId::Square:
      return make_simple_unary(xnn_create_square_nc_f32, xnn_setup_square_nc_f32, "xnnpack:square_nc_f32", op,
                               FlushRange{0x1p-63f});
    case OpId::Sqrt:
      return make_simple_unary(xnn_create_square_root_nc_f32, xnn_setup_square_root_nc_f32,
                               "xnnpack:square_root_nc_f32", op, subnormal);
    case OpId::Floor:
      return make_simple_unary(xnn_create_floor_nc_f32, xnn_setup_floor_nc_f32, "xnnpack:floor_nc_f32", op,
                               subnormal);
    case OpId::Ceil:
      return make_simple_unary(xnn_create_ceiling_nc_f32, xnn_setup_ceiling_nc_f32, "xnnpack:ceiling_nc_f32", op,
                               subnormal);
    case OpId::Round:
      return make_simple_unary(xnn_create_bankers_rounding_nc_f32, xnn_setup_bankers_rounding_nc_f32,
                               "xnnpack:bankers_rounding_nc_f32", op);
    case OpId::Sigmoid:
      return make_simple_unary(xnn_create_sigmoid_nc_f32, xnn_setup_sigmoid_nc_f32, "xnnpack:sigmoid_nc_f32", op,
                               FlushRange{0, -87.0f});
    default: return nullptr;
  }
}

std::unique_ptr<PreparedKernel> make_softmax(const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (in.size() != 1 || !is_f32(in[0]) || in[0].rank < 1 || attrs.values.empty()) return nullptr;
  if (attrs.i(ops::attr::kAxisValue) != in[0].rank - 1) return nullptr;
  return std::make_unique<SoftmaxKernel>(attrs);
}

}  // namespace sg::kernels::xnn
