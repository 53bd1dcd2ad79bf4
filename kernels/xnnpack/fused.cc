// fully_connected and conv2d_bias: the XNNPACK kernel of the unfused core (matmul
// or conv2d) writes the output, then one pass over it adds the bias and applies
// the activation in place.
//
// The bias and relu are not given to the XNNPACK operator (its bias pointer and
// output_min = 0): its clamp is a max instruction that turns NaN into 0, which the
// output scan of the core kernels could then no longer see, and NumPy keeps NaN.
// The core kernel keeps the backend's rule (a NaN or -inf in its output sends the
// node to the reference kernel), and the epilogue is exact, so the fused node gives
// what the unfused nodes give.
#include <string>

#include "reference/reference_kernels.h"
#include "xnnpack/xnn_common.h"
#include "xnnpack/xnnpack_backend.h"

namespace sg::kernels::xnn {
namespace {

class BiasActivationKernel final : public PreparedKernel {
 public:
  BiasActivationKernel(std::unique_ptr<PreparedKernel> core, int64_t activation)
      : core_(std::move(core)), activation_(activation) {
    name_ = std::string(core_->name()) + "+bias";
    if (activation_ == ops::attr::kActRelu) name_ += "+relu";
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 3 || out.size() != 1) return internal_error("fused node: wrong operand count");
    const TensorRef &b = in[2], &o = out[0];
    if (!is_f32(b) || !is_f32(o) || b.rank != 1 || o.rank < 1 || o.shape[o.rank - 1] != b.shape[0])
      return internal_error("fused node: bias " + describe_shape(b) + " for output " + describe_shape(o));
    SG_RETURN_IF_ERROR(core_->run(ctx, in.first(2), out));
    const int64_t channels = b.shape[0];
    if (channels > 0) bias_activation_f32(o.as<float>(), o.numel() / channels, channels, b.as<const float>(), activation_);
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return core_->memory_bytes(); }

 private:
  std::unique_ptr<PreparedKernel> core_;
  int64_t activation_;
  std::string name_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_fused(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in) {
  using ops::OpId;
  if (in.size() != 3 || !is_f32(in[2]) || in[2].rank != 1) return nullptr;
  std::unique_ptr<PreparedKernel> core;
  int64_t activation = 0;
  if (op == OpId::FullyConnected && attrs.values.size() == 1) {
    activation = attrs.i(ops::attr::kFcActivation);
    core = xnnpack_prepare(OpId::MatMul, ops::Attrs{}, in.first(2));
  } else if (op == OpId::Conv2DBias && attrs.values.size() == 5) {
    activation = attrs.i(ops::attr::kConvActivation);
    core = make_conv2d(attrs, in.first(2));  // reads attributes 0..3, conv2d's
  }
  if (core == nullptr || activation < 0 || activation >= ops::attr::kNumActivations) return nullptr;
  return std::make_unique<BiasActivationKernel>(std::move(core), activation);
}

}  // namespace sg::kernels::xnn
