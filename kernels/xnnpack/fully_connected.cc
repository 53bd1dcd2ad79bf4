// matmul with a constant rank-2 right operand, on XNNPACK's fully connected
// operator: the weights are packed once, and every leading dim of the left
// operand becomes the batch. Large weights are split into operators of 128
// output channels, each writing its columns of the output (output_stride = N):
// one operator's packed weights then stay in L2, which measured 2.5x faster at
// 4096x4096 (shared/DEPENDENCIES.md).
#include <algorithm>
#include <limits>
#include <vector>

#include "xnnpack/xnn_common.h"

namespace sg::kernels::xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Packed weights above this size are split.
constexpr size_t kSplitBytes = size_t(1) << 20;
constexpr int64_t kSplitChannels = 128;

class FullyConnectedKernel final : public PreparedKernel {
 public:
  FullyConnectedKernel(std::vector<Operator> ops, int64_t k, int64_t n) : ops_(std::move(ops)), k_(k), n_(n) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 2 || out.size() != 1) return internal_error("matmul: wrong operand count");
    const TensorRef &a = in[0], &o = out[0];
    if (!is_f32(a) || !is_f32(o) || a.rank < 1 || a.shape[a.rank - 1] != k_ || o.rank < 1 ||
        o.shape[o.rank - 1] != n_ || (a.numel() / k_) * n_ != o.numel())
      return internal_error("matmul: " + describe_shape(a) + " @ f32[" + std::to_string(k_) + ", " +
                            std::to_string(n_) + "] -> " + describe_shape(o));
    const size_t batch = size_t(a.numel() / k_);
    if (batch == 0) return Status::Ok();
    for (size_t i = 0; i < ops_.size(); ++i) {
      float* dst = o.as<float>() + i * size_t(kSplitChannels);
      SG_RETURN_IF_ERROR(check(xnn_setup_fully_connected_nc_f32(ops_[i].get(), batch, a.as<const float>(), dst,
                                                                pool_of(ctx)),
                               "fully connected setup"));
      SG_RETURN_IF_ERROR(check(xnn_run_operator(ops_[i].get(), pool_of(ctx)), "fully connected"));
    }
    if (has_nan_or_neg_inf(o.as<const float>(), size_t(o.numel())))
      return run_reference(ops::OpId::MatMul, {}, ctx, in, out);
    return Status::Ok();
  }
  const char* name() const override {
    return ops_.size() > 1 ? "xnnpack:fully_connected_nc_f32(split)" : "xnnpack:fully_connected_nc_f32";
  }
  // The packed weights: XNNPACK rounds N up to its tile and adds a bias row; this
  // counts the exact K x N floats plus the bias, which it exceeds by under a tile.
  size_t memory_bytes() const override { return size_t((k_ + 1) * n_) * sizeof(float); }

 private:
  std::vector<Operator> ops_;
  int64_t k_, n_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_fully_connected(std::span<const InputInfo> in, FcSplit mode) {
  if (in.size() != 2) return nullptr;
  const InputInfo &a = in[0], &b = in[1];
  if (!is_f32(a) || !is_f32(b) || a.rank < 1 || b.rank != 2 || b.constant == nullptr) return nullptr;
  const int64_t k = b.shape[0], n = b.shape[1];
  // An empty inner dim gives zeros, which the reference kernel writes.
  if (k <= 0 || n <= 0 || (a.shape[a.rank - 1] >= 0 && a.shape[a.rank - 1] != k)) return nullptr;
  const float* w = static_cast<const float*>(b.constant);

  std::vector<Operator> ops;
  const bool split = mode == FcSplit::kAlways ||
                     (mode == FcSplit::kAuto && size_t(k * n) * sizeof(float) > kSplitBytes && n > kSplitChannels);
  if (!split) {
    // XNN_FLAG_TRANSPOSE_WEIGHTS: the kernel is [input_channels][output_channels], our [K][N].
    xnn_operator_t p = nullptr;
    if (xnn_create_fully_connected_nc_f32(size_t(k), size_t(n), size_t(k), size_t(n), w, nullptr, -kInf, kInf,
                                          XNN_FLAG_TRANSPOSE_WEIGHTS, &p) != xnn_status_success)
      return nullptr;
    ops.emplace_back(p);
  } else {
    // [N][K]: each slice of output channels is then a contiguous block of rows.
    std::vector<float> wt(size_t(k * n));
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) wt[size_t(c * k + r)] = w[r * n + c];
    for (int64_t c0 = 0; c0 < n; c0 += kSplitChannels) {
      const int64_t nc = std::min(kSplitChannels, n - c0);
      xnn_operator_t p = nullptr;
      if (xnn_create_fully_connected_nc_f32(size_t(k), size_t(nc), size_t(k), size_t(n), wt.data() + c0 * k, nullptr,
                                            -kInf, kInf, 0, &p) != xnn_status_success)
        return nullptr;
      ops.emplace_back(p);
    }
  }
  return std::make_unique<FullyConnectedKernel>(std::move(ops), k, n);
}

}  // namespace sg::kernels::xnn
