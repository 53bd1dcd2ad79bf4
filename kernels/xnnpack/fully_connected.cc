// matmul with a constant rank-2 right operand, and fully_connected with constant
// weights and bias, on XNNPACK's fully connected operator: weights and bias are
// packed once, bias and relu run inside the operator (its output_min), and every
// leading dim of the left operand becomes the batch. Clamping inside XNNPACK is
// exact only while nothing overflows, which OverflowBound checks per run from the
// input (xnn_common.h); an input that could overflow, or is NaN or infinite, runs
// the reference kernel.
//
// Where our packed-weight GEMM is faster (packed_gemm_isa), it runs the node
// instead (dense_gemm.cc).
//
// Large weights are split into operators of 128 output channels, each writing
// its columns of the output (output_stride = N): one operator's packed weights
// then stay in L2, which measured 2.5x faster at 4096x4096
// (shared/DEPENDENCIES.md).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "xnnpack/xnn_common.h"

namespace sg::kernels::xnn {
std::optional<DenseLayer> dense_layer_of(std::span<const InputInfo> in, int64_t activation) {
  if (in.size() != 2 && in.size() != 3) return std::nullopt;
  const InputInfo &a = in[0], &b = in[1];
  if (!is_f32(a) || !is_f32(b) || a.rank < 1 || b.rank != 2 || b.constant == nullptr) return std::nullopt;
  DenseLayer layer;
  layer.k = b.shape[0];
  layer.n = b.shape[1];
  // An empty inner dim gives zeros (plus the bias), which the reference kernel writes.
  if (layer.k <= 0 || layer.n <= 0 || (a.shape[a.rank - 1] >= 0 && a.shape[a.rank - 1] != layer.k))
    return std::nullopt;
  const bool fused = in.size() == 3;
  if (fused && (!is_f32(in[2]) || in[2].rank != 1 || in[2].shape[0] != layer.n || in[2].constant == nullptr))
    return std::nullopt;
  if (activation != ops::attr::kActNone && (!fused || activation != ops::attr::kActRelu)) return std::nullopt;
  layer.w = static_cast<const float*>(b.constant);
  layer.bias = fused ? static_cast<const float*>(in[2].constant) : nullptr;
  layer.relu = activation == ops::attr::kActRelu;
  return layer;
}

Status check_dense_operands(ops::OpId op, int64_t k, int64_t n, std::span<const TensorRef> in,
                            std::span<TensorRef> out) {
  const bool fused = op == ops::OpId::FullyConnected;
  if (in.size() != (fused ? 3u : 2u) || out.size() != 1) return internal_error("matmul: wrong operand count");
  const TensorRef &a = in[0], &o = out[0];
  if (!is_f32(a) || !is_f32(o) || a.rank < 1 || a.shape[a.rank - 1] != k || o.rank < 1 || o.shape[o.rank - 1] != n ||
      (a.numel() / k) * n != o.numel() || (fused && (in[2].rank != 1 || in[2].shape[0] != n)))
    return internal_error(std::string(fused ? "fully_connected: " : "matmul: ") + describe_shape(a) + " @ f32[" +
                          std::to_string(k) + ", " + std::to_string(n) + "] -> " + describe_shape(o));
  return Status::Ok();
}

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Packed weights above this size are split.
constexpr size_t kSplitBytes = size_t(1) << 20;
constexpr int64_t kSplitChannels = 128;

// What the operators were last set up with: setup is redone only when it changes.
struct FcSetup {
  size_t batch = 0;
  const float* input = nullptr;
  float* output = nullptr;
  void* pool = nullptr;
  bool operator==(const FcSetup&) const = default;
};

class FullyConnectedKernel final : public PreparedKernel {
 public:
  FullyConnectedKernel(std::vector<Operator> ops, ops::OpId op, ops::Attrs attrs, int64_t k, int64_t n,
                       OverflowBound bound, std::string name)
      : ops_(std::move(ops)), op_(op), attrs_(std::move(attrs)), k_(k), n_(n), bound_(bound),
        name_(std::move(name)), isa_(simd::best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    SG_RETURN_IF_ERROR(check_dense_operands(op_, k_, n_, in, out));
    const TensorRef &a = in[0], &o = out[0];
    const size_t batch = size_t(a.numel() / k_);
    if (batch == 0) return Status::Ok();
    if (!bound_.safe(max_magnitude(a.as<const float>(), size_t(a.numel()), isa_)))
      return run_reference(op_, attrs_, ctx, in, out);
    const FcSetup now{batch, a.as<const float>(), o.as<float>(), ctx.threadpool};
    if (!(now == setup_)) {
      setup_ = FcSetup{};  // a failure below leaves no stale setup behind
      for (size_t i = 0; i < ops_.size(); ++i)
        SG_RETURN_IF_ERROR(check(xnn_setup_fully_connected_nc_f32(ops_[i].get(), batch, now.input,
                                                                  now.output + i * size_t(kSplitChannels),
                                                                  pool_of(ctx)),
                                 "fully connected setup"));
      setup_ = now;
    }
    for (const Operator& op : ops_) SG_RETURN_IF_ERROR(check(xnn_run_operator(op.get(), pool_of(ctx)), "fully connected"));
    return Status::Ok();
  }
  bool needs_pool() const override { return true; }
  const char* name() const override { return name_.c_str(); }
  // The packed weights and bias: XNNPACK rounds N up to its tile, which this
  // exact (K + 1) x N count undercounts by less than a tile.
  size_t memory_bytes() const override { return size_t((k_ + 1) * n_) * sizeof(float); }

 private:
  std::vector<Operator> ops_;
  ops::OpId op_;       // matmul or fully_connected, for the reference kernel
  ops::Attrs attrs_;
  int64_t k_, n_;
  OverflowBound bound_;
  std::string name_;
  simd::Isa isa_;
  FcSetup setup_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_fully_connected(std::span<const InputInfo> in, int64_t activation, FcSplit mode) {
  const std::optional<DenseLayer> layer = dense_layer_of(in, activation);
  if (!layer) return nullptr;
  const int64_t k = layer->k, n = layer->n;
  const bool fused = layer->bias != nullptr;
  if (mode == FcSplit::kAuto)
    if (const std::optional<simd::Isa> isa = packed_gemm_isa(n))
      if (auto ours = make_packed_gemm(in, activation, *isa)) return ours;
  const float* w = layer->w;
  const float* bias = layer->bias;
  const float out_min = activation == ops::attr::kActRelu ? 0.0f : -kInf;

  std::vector<Operator> ops;
  const bool split = mode == FcSplit::kAlways ||
                     (mode != FcSplit::kNever && size_t(k * n) * sizeof(float) > kSplitBytes && n > kSplitChannels);
  if (!split) {
    // XNN_FLAG_TRANSPOSE_WEIGHTS: the kernel is [input_channels][output_channels], our [K][N].
    xnn_operator_t p = nullptr;
    if (xnn_create_fully_connected_nc_f32(size_t(k), size_t(n), size_t(k), size_t(n), w, bias, out_min, kInf,
                                          XNN_FLAG_TRANSPOSE_WEIGHTS, &p) != xnn_status_success)
      return nullptr;
    ops.emplace_back(p);
  } else {
    // [N][K]: each slice of output channels is then a contiguous block of rows.
    const std::unique_ptr<float[]> wt = try_floats(size_t(k * n));
    if (!wt) return nullptr;  // the reference kernel reads the weights in place
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) wt[size_t(c * k + r)] = w[r * n + c];
    for (int64_t c0 = 0; c0 < n; c0 += kSplitChannels) {
      const int64_t nc = std::min(kSplitChannels, n - c0);
      xnn_operator_t p = nullptr;
      if (xnn_create_fully_connected_nc_f32(size_t(k), size_t(nc), size_t(k), size_t(n), wt.get() + c0 * k,
                                            bias != nullptr ? bias + c0 : nullptr, out_min, kInf, 0,
                                            &p) != xnn_status_success)
        return nullptr;
      ops.emplace_back(p);
    }
  }
  std::string name = split ? "xnnpack:fully_connected_nc_f32(split)" : "xnnpack:fully_connected_nc_f32";
  if (fused) name += "+bias";
  if (activation == ops::attr::kActRelu) name += "+relu";
  ops::Attrs attrs;
  if (fused) attrs.values = {ops::AttrValue::Int(activation)};
  return std::make_unique<FullyConnectedKernel>(std::move(ops), fused ? ops::OpId::FullyConnected : ops::OpId::MatMul,
                                                std::move(attrs), k, n,
                                                OverflowBound::of(w, size_t(k), size_t(n), bias), std::move(name));
}

}  // namespace sg::kernels::xnn
