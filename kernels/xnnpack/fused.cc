// fully_connected and conv2d_bias. With constant weights and bias, the whole node
// is one operator (fully_connected.cc, conv_pool.cc, or our GEMM). Constant
// weights with a bias computed at run time run our GEMM where it takes the layer
// (packed_gemm_isa), which adds that bias in its last store. Otherwise the
// kernel of the unfused core (matmul, conv2d) writes the output and one
// vectorized pass adds the bias and applies the activation in place, with
// NumPy's NaN rule (relu keeps NaN); tanh is a second pass, sg:tanh_f32's.
#include <string>

#include "simd/simd.h"
#include "xnnpack/xnn_common.h"
#include "xnnpack/xnnpack_backend.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

template <class V>
SG_SIMD_INLINE void bias_activation_rows(float* data, size_t rows, size_t channels, const float* bias, bool relu) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = data + r * channels;
    size_t c = 0;
    for (; c + kLanes<V> <= channels; c += kLanes<V>) {
      V v = load<V>(row + c) + load<V>(bias + c);
      if (relu) v = v < splat<V>(0.0f) ? splat<V>(0.0f) : v;
      store<V>(row + c, v);
    }
    for (; c < channels; ++c) {
      const float v = row[c] + bias[c];
      row[c] = relu && v < 0.0f ? 0.0f : v;
    }
  }
}

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 void epilogue_avx512(float* d, size_t rows, size_t ch, const float* b, bool relu) {
  bias_activation_rows<V16>(d, rows, ch, b, relu);
}
SG_TARGET_AVX2 void epilogue_avx2(float* d, size_t rows, size_t ch, const float* b, bool relu) {
  bias_activation_rows<V8>(d, rows, ch, b, relu);
}
#endif
void epilogue_baseline(float* d, size_t rows, size_t ch, const float* b, bool relu) {
  bias_activation_rows<V4>(d, rows, ch, b, relu);
}

class BiasActivationKernel final : public PreparedKernel {
 public:
  BiasActivationKernel(std::unique_ptr<PreparedKernel> core, int64_t activation)
      : core_(std::move(core)),
        relu_(activation == ops::attr::kActRelu),
        tanh_(activation == ops::attr::kActTanh),
        isa_(best_isa()) {
    name_ = std::string(core_->name()) + (relu_ ? "+sg:bias_relu" : tanh_ ? "+sg:bias+sg:tanh_f32" : "+sg:bias");
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 3 || out.size() != 1) return internal_error("fused node: wrong operand count");
    const TensorRef &b = in[2], &o = out[0];
    if (!is_f32(b) || !is_f32(o) || b.rank != 1 || o.rank < 1 || o.shape[o.rank - 1] != b.shape[0])
      return internal_error("fused node: bias " + describe_shape(b) + " for output " + describe_shape(o));
    SG_RETURN_IF_ERROR(core_->run(ctx, in.first(2), out));
    const size_t channels = size_t(b.shape[0]);
    if (channels == 0) return Status::Ok();
    float* d = o.as<float>();
    const size_t rows = size_t(o.numel()) / channels;
    switch (isa_) {
#ifdef SG_SIMD_X86
      case Isa::kAvx512: epilogue_avx512(d, rows, channels, b.as<const float>(), relu_); break;
      case Isa::kAvx2: epilogue_avx2(d, rows, channels, b.as<const float>(), relu_); break;
#endif
      default: epilogue_baseline(d, rows, channels, b.as<const float>(), relu_); break;
    }
    if (tanh_) tanh_f32(ctx, isa_, d, d, size_t(o.numel()));
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return core_->memory_bytes(); }
  bool needs_pool() const override { return core_->needs_pool(); }

 private:
  std::unique_ptr<PreparedKernel> core_;
  bool relu_, tanh_;
  Isa isa_;
  std::string name_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_fused(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in) {
  using ops::OpId;
  if (in.size() != 3 || !is_f32(in[2]) || in[2].rank != 1) return nullptr;
  const bool constant_bias = in[2].constant != nullptr;
  std::unique_ptr<PreparedKernel> core;
  int64_t activation = 0;
  if (op == OpId::FullyConnected && attrs.values.size() == 1) {
    activation = attrs.i(ops::attr::kFcActivation);
    if (constant_bias && in[1].constant != nullptr && activation != ops::attr::kActTanh)
      if (auto whole = make_fully_connected(in, activation)) return whole;
    // Constant weights, with a bias computed at run time or a tanh (XNNPACK's
    // operator has neither): our GEMM adds the bias in its store, then tanh.
    if ((!constant_bias || activation == ops::attr::kActTanh) && in[1].constant != nullptr && in[1].rank == 2)
      if (const std::optional<simd::Isa> isa = packed_gemm_isa(in[1].shape[1]))
        if (auto ours = make_packed_gemm(in, activation, *isa)) return ours;
    // Run-time weights: packed in the run for the same GEMM, bias and activation
    // in its store (run_time_gemm.cc).
    if (in[1].constant == nullptr && in[1].rank == 2)
      if (auto ours = make_run_time_gemm(in, activation)) return ours;
    core = xnnpack_prepare(OpId::MatMul, ops::Attrs{}, in.first(2));
  } else if (op == OpId::Conv2DBias && attrs.values.size() == 5) {
    activation = attrs.i(ops::attr::kConvActivation);
    // A run-time filter: bias and relu in our kernel's store (make_conv2d).
    if ((constant_bias && in[1].constant != nullptr) || in[1].constant == nullptr)
      if (auto whole = make_conv2d(attrs, in)) return whole;
    ops::Attrs conv = attrs;
    conv.values.pop_back();  // conv2d's attributes are conv2d_bias's without the activation
    core = make_conv2d(conv, in.first(2));
  }
  if (core == nullptr || activation < 0 || activation >= ops::attr::kNumActivations) return nullptr;
  return std::make_unique<BiasActivationKernel>(std::move(core), activation);
}

}  // namespace sg::kernels::xnn
