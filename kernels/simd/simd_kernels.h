// Our own f32 kernels (simd/): the factories of each kernel family and the
// helpers they share, none of which names XNNPACK. The CPU backend's routing
// (xnnpack/xnnpack_backend.cc: xnnpack_prepare) picks, per node, an XNNPACK
// operator (xnnpack/) or one of these; xnnpack/xnn_common.h adds what only the
// operators need. These are compiled into the backend's library
// (sg_kernels_xnnpack), which defines threads_of and parallelize_tiles over its
// pool or the context's team.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>

#include "interface/kernel.h"
#include "ops/attrs.h"
#include "ops/op_table.h"
#include "simd/simd.h"

namespace sg::kernels::xnn {

// The threads a kernel of ours may split over: its team's or its pool's, else 1.
size_t threads_of(const KernelContext& ctx);
// task(context, begin, count) over [0, range) in tiles of `tile` indices, on the
// context's team or pool or this thread, as parallelize (interface/kernel.h).
void parallelize_tiles(const KernelContext& ctx, void (*task)(void*, size_t, size_t), void* context, size_t range,
                       size_t tile);
// The work below which a kernel runs on one thread, in operations: 2^21, where
// on cnn's first 3x3 convolution (0.9 MFLOP) and its poolings waking the second
// thread cost more than it saved (conv 12.5 -> 29 µs on two threads).
inline constexpr double kMinPoolFlops = double(1 << 21);
// y[i] = tanh(x[i]) for i < n as the sg:tanh_f32 kernel computes it on `isa` (y may be x),
// split over the context's threads when long: fused ops' tanh activation.
void tanh_f32(const KernelContext& ctx, simd::Isa isa, const float* x, float* y, size_t n);

// A float buffer allocated without throwing, null when memory ran out: scratch as
// large as a layer's weights or a whole image's patches must fail as a Status (the
// tools link mimalloc whole, whose operator new aborts where it would throw).
inline std::unique_ptr<float[]> try_floats(size_t n) { return std::unique_ptr<float[]>(new (std::nothrow) float[n]); }

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

// The largest |x| over p[0..n), or +inf when some element is NaN or infinite:
// the run-time half of the overflow bound below. Vectorized for `isa`.
float max_magnitude(const float* p, size_t n, simd::Isa isa);

// Why our XNNPACK kernels may clamp and fuse: XNNPACK's clamp is a max/min
// instruction that turns NaN into the bound (NumPy keeps NaN), so a NaN in an
// output would be lost or turned into -inf. For a dense op with constant weights,
// every partial sum of an output element is bounded by
//   max|x| * max over output channels of sum |w| + max|bias|,
// so when that bound is finite (and not near FLT_MAX) no intermediate can
// overflow and no output can be NaN or infinite: clamped and fused results are
// then exactly NumPy's. The weight half is computed once at creation; the input
// half is one vectorized pass over the input, far cheaper than the op.
struct OverflowBound {
  double weights = 0;  // max over output channels of sum |w|; inf if any w is not finite
  double bias = 0;     // max |bias|; inf if any is not finite

  // For weights laid out [rows][channels] (channel fastest) and `channels` biases
  // (null: none).
  static OverflowBound of(const float* w, size_t rows, size_t channels, const float* bias);
  // True when an input with this max|x| cannot give a NaN, an infinity or an
  // overflow anywhere in the op.
  bool safe(float max_abs_input) const;
};

// "f32[2, 3]" for messages.
std::string describe_shape(const TensorRef& t);

// A dense layer a prepared kernel can take: x [..., k] @ w [k, n] (+ bias [n]) with
// f32 constant weights (and bias) and no activation or relu (relu only with a bias).
struct DenseLayer {
  int64_t k = 0, n = 0;
  const float* w = nullptr;
  const float* bias = nullptr;  // null for a plain matmul
  bool relu = false;
};
// The layer of a matmul (2 inputs) or fully_connected (3) node; nullopt when the
// node is not one (the reference kernel then runs it).
std::optional<DenseLayer> dense_layer_of(std::span<const InputInfo> in, int64_t activation);

// Checks the operands of a prepared dense layer (matmul, or fully_connected with its
// bias) against the k and n it was prepared for: x [..., k] @ w [k, n] -> [..., n].
Status check_dense_operands(ops::OpId op, int64_t k, int64_t n, std::span<const TensorRef> in,
                            std::span<TensorRef> out);

// The kernel families. Each returns null for a node it does not cover.
// make_fully_connected: matmul (2 inputs) or fully_connected (3: the bias, which
// must then be constant, like the weights) with `activation` (ops::attr::kAct*).
// kAuto runs our packed-weight GEMM where it is the faster (make_packed_gemm,
// packed_gemm_isa), else XNNPACK like kXnnpack; kXnnpack splits
// weights over ~1 MiB into XNNPACK operators of 128 output channels; kNever and
// kAlways force one XNNPACK layout (for benchmarks and tests).
enum class FcSplit { kAuto, kXnnpack, kNever, kAlways };
std::unique_ptr<PreparedKernel> make_fully_connected(std::span<const InputInfo> in,
                                                     int64_t activation = ops::attr::kActNone,
                                                     FcSplit split = FcSplit::kAuto);
// The same nodes on our packed-weight GEMM (dense_gemm.h) for instruction set
// `isa`: null where that set is not ours to run (baseline, or beyond this CPU).
std::unique_ptr<PreparedKernel> make_packed_gemm(std::span<const InputInfo> in, int64_t activation, simd::Isa isa);
// The instruction set our GEMM runs a layer of n output channels with, where it
// is faster than XNNPACK's operator on this CPU; nullopt where XNNPACK's is.
// Measured (bench/micro/RESULTS.md):
//  - AVX-512 (Xeon): ours wins at every batch (1.2-1.9x) where its 32-wide panels
//    are mostly real columns, and loses where zero padding fills most of them
//    (n = 10: 0.7x), so it takes layers whose padded panels are at least 70% real
//    columns (n = 48 and 100 measured faster);
//  - AVX2 without AVX-512 (EPYC, Zen 3): this XNNPACK ran its operators at ~35
//    GFLOP/s against ours at 77-88 on 16-wide panels, and ours won every layer
//    measured, n = 10 included (2.4x), at batch 1 to 64.
std::optional<simd::Isa> packed_gemm_isa(int64_t n);
std::unique_ptr<PreparedKernel> make_batch_matmul(std::span<const InputInfo> in);
// matmul (2 inputs) or fully_connected (3, any bias) whose weights are a run-time
// rank-2 input of static shape, with `activation` (none, relu or tanh; only none
// for a matmul): packed in the run for our GEMM (run_time_gemm.cc). Null on CPUs
// without our micro-kernels.
std::unique_ptr<PreparedKernel> make_run_time_gemm(std::span<const InputInfo> in,
                                                   int64_t activation = ops::attr::kActNone);
// conv2d (2 inputs, conv2d's attributes) or conv2d_bias (3 inputs, a constant
// bias, conv2d_bias's attributes), with a constant filter.
std::unique_ptr<PreparedKernel> make_conv2d(const ops::Attrs& attrs, std::span<const InputInfo> in);
// A 2-D window (conv2d, pooling): size, stride, dilation, SAME or VALID padding.
struct Window2D {
  int64_t kh, kw, sh, sw, dh, dw;
  bool same;
};

// The output size of one spatial axis by SPEC §7.
inline int64_t output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  if (same) return (in + stride - 1) / stride;
  const int64_t span = (k - 1) * dilation + 1;
  return in >= span ? (in - span) / stride + 1 : 0;
}

// The padding before one spatial axis for an output of `out`: SAME splits the total
// with the odd cell after (SPEC §7); VALID pads nothing.
inline int64_t padding_before(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, bool same) {
  if (!same) return 0;
  const int64_t total = (out - 1) * stride + (k - 1) * dilation + 1 - in;
  return total > 0 ? total / 2 : 0;
}

// The same conv2d / conv2d_bias on our packed GEMM over gathered patches
// (conv_gemm.cc), for a validated window; null where XNNPACK's operator is the
// better choice (see conv_gemm.cc) or the CPU has neither AVX-512 nor AVX2.
std::unique_ptr<PreparedKernel> make_conv_gemm(const ops::Attrs& attrs, std::span<const InputInfo> in,
                                               const Window2D& w, int64_t groups, int64_t activation);
// The same with the filter (and bias) run-time inputs of static shape, packed on
// every run; null without one of our GEMM's instruction sets (AVX-512, AVX2).
std::unique_ptr<PreparedKernel> make_conv_gemm_run_time(const ops::Attrs& attrs, std::span<const InputInfo> in,
                                                        const Window2D& w, int64_t groups, int64_t activation);
// f32 max pooling over a validated window with AVX-512 or AVX2 (max_pool.cc),
// bit-identical to the reference kernel, NaN included; null without either.
// conv2d / conv2d_bias with a run-time filter and groups > 1 (depthwise
// included), on our direct kernels (depthwise_conv.cc); null where they do not run.
std::unique_ptr<PreparedKernel> make_depthwise_run_time(const ops::Attrs& attrs, std::span<const InputInfo> in,
                                                        const Window2D& w, int64_t groups, int64_t activation);
std::unique_ptr<PreparedKernel> make_max_pool(const Window2D& w);
std::unique_ptr<PreparedKernel> make_pool(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_unary(ops::OpId op, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_binary(ops::OpId op, std::span<const InputInfo> in);
// f32 greater, greater_equal, less, less_equal, equal, not_equal, and where with a
// bool condition and f32 values, where each operand has the output's elements or
// one (simd/select.cc).
std::unique_ptr<PreparedKernel> make_compare(ops::OpId op, std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_where(std::span<const InputInfo> in);
std::unique_ptr<PreparedKernel> make_softmax(const ops::Attrs& attrs, std::span<const InputInfo> in);
// Our own vectorized kernels where XNNPACK lacks the op (f32 tanh, gelu) or
// differs from NumPy on NaN (relu, binary arithmetic, maximum, minimum).
std::unique_ptr<PreparedKernel> make_activation(ops::OpId op, std::span<const InputInfo> in);
// transpose of any dtype as a cache-blocked copy (transpose.cc), which this XNNPACK
// lacks; permutations that keep rows contiguous go to the reference kernel.
std::unique_ptr<PreparedKernel> make_transpose(const ops::Attrs& attrs, std::span<const InputInfo> in);
// concatenate of any dtype, its rows split over the threads when large
// (concatenate.cc); small outputs go to the reference kernel.
std::unique_ptr<PreparedKernel> make_concatenate(const ops::Attrs& attrs, std::span<const InputInfo> in);
// f32 layer_norm over the last axis (layer_norm.cc), which this XNNPACK lacks.
std::unique_ptr<PreparedKernel> make_layer_norm(const ops::Attrs& attrs, std::span<const InputInfo> in);
// f32 max, min, argmax and argmin over the last axes (reduce.cc), which this
// XNNPACK lacks; other layouts go to the reference kernel.
std::unique_ptr<PreparedKernel> make_reduce(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in);
// fully_connected and conv2d_bias: one XNNPACK operator with constant weights and
// bias, else the core's kernel, then bias and activation.
std::unique_ptr<PreparedKernel> make_fused(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in);
// elementwise_chain on the rows below, block by block (elementwise_chain.cc).
std::unique_ptr<PreparedKernel> make_elementwise_chain(const ops::Attrs& attrs, std::span<const InputInfo> in);

// The row functions our f32 elementwise kernels run on `isa`, null for another op:
// binary (add, sub, mul, div, maximum, minimum), o[i] = op(a[step_a ? i : 0],
// b[step_b ? i : 0]) for i < n; unary (tanh, gelu, relu), y[i] = f(x[i]), each
// element the vector code's result wherever it lies. o may be a or b, y may be x.
using BinaryRowFn = void (*)(const float* a, bool step_a, const float* b, bool step_b, float* o, size_t n);
using UnaryRowFn = void (*)(const float* x, float* y, size_t n);
BinaryRowFn binary_row(ops::OpId op, simd::Isa isa);
UnaryRowFn unary_row(ops::OpId op, simd::Isa isa);

}  // namespace sg::kernels::xnn
