// Shared pieces of the XNNPACK backend: operator ownership, status conversion,
// the reference fallback, and the factories of
// each kernel family (xnnpack_prepare routes every op to one of them).
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "reference/kernel.h"

namespace sg::kernels::xnn {

struct OperatorDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using Operator = std::unique_ptr<xnn_operator, OperatorDeleter>;

// kInternal "xnnpack: <what> failed (<status>)" unless `s` is success.
Status check(xnn_status s, const char* what);

inline pthreadpool_t pool_of(const KernelContext& ctx) { return static_cast<pthreadpool_t>(ctx.threadpool); }

inline bool is_f32(const InputInfo& in) { return in.dtype == DType::kF32; }
inline bool is_f32(const TensorRef& t) { return t.dtype == DType::kF32; }

// Runs the reference kernel of `op` (for shapes a prepared kernel cannot take).
// kInternal when that kernel would need scratch memory the context lacks.
Status run_reference(ops::OpId op, const ops::Attrs& attrs, const KernelContext& ctx,
                     std::span<const TensorRef> in, std::span<TensorRef> out);

// True when some element is NaN or -inf. XNNPACK's operators clamp their output
// to [-inf, inf] with max/min instructions that turn NaN into -inf (and its max
// pooling skips NaN); a kernel that finds one of these where NumPy could have a
// NaN recomputes the node with the reference kernel. Real -inf results are rare,
// so the recomputation is too, and the scan costs far less than the op.
bool has_nan_or_neg_inf(const float* p, size_t n);

// "f32[2, 3]" for messages.
std::string describe_shape(const TensorRef& t);

// The kernel families. Each returns null for a node it does not cover.
// kAuto splits weights over ~1 MiB into operators of 128 output channels; the
// others force one layout (for benchmarks and tests).
enum class FcSplit { kAuto, kNever, kAlways };
std::unique_ptr<PreparedKernel> make_fully_connected(std::span<const InputInfo> in, FcSplit split = FcSplit::kAuto);
std::unique_ptr<PreparedKernel> make_batch_matmul(std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_conv2d(const ops::Attrs& attrs, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_pool(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_unary(ops::OpId op, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_binary(ops::OpId op, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_softmax(const ops::Attrs& attrs, std::span<const InputInfo> in);
// Our own vectorized kernels where XNNPACK lacks the op (f32 tanh, gelu) or
// differs from NumPy on NaN (relu, binary arithmetic, maximum, minimum).
std::unique_ptr<PreparedKernel> make_activation(ops::OpId op, std::span<const InputInfo> in);
// fully_connected and conv2d_bias: the core's kernel, then bias and activation.
std::unique_ptr<PreparedKernel> make_fused(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in);

}  // namespace sg::kernels::xnn
