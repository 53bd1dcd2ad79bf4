// The XNNPACK CPU backend: prepared kernels for the f32 nodes XNNPACK (or one of
// our own vectorized kernels in this folder) runs faster than the reference.
//
// How a Session uses it:
//   1. xnnpack_init() once (any thread, any number of times). When it fails the
//      CPU is unsupported: use the reference kernels only.
//   2. At Session creation, for each node: xnnpack_prepare(op, attrs, inputs).
//      Non-null: run that node with it. Null: run the node's reference kernel.
//      Preparing packs constant weights, so do it once per node per Session.
//   3. At each execution of the node: kernel->run(ctx, inputs, outputs), with
//      ctx.threadpool the Session's pool (xnnpack_create_threadpool) or ctx.team
//      its team, or neither.
//
// Lifetime and threading rules:
//   - xnnpack_prepare reads InputInfo::constant only while it runs: weights are
//     packed into memory the kernel owns, so a kernel may outlive the Program's
//     constants and the InputInfo array. (XNNPACK's process-wide state is never
//     torn down, so kernels may be destroyed at any time.)
//   - run() is neither thread-safe nor re-entrant for one kernel object: a kernel
//     belongs to one Session, and a Session runs one call at a time. Distinct
//     kernels may run concurrently on different threads.
//   - run() re-plans when the shapes differ from the previous run's (symbolic dims),
//     so any shape the op's rule accepts works; a shape XNNPACK cannot take (a
//     binary op over more than 6 uncoalescable dims...) is run by the reference
//     kernel from inside run(). Operands the rule would reject give the reference
//     kernel's kInternal error.
//   - Inputs must have XNN_EXTRA_BYTES (16) readable bytes past their end; outputs
//     are written only within their numel(). KernelContext::scratch is not used
//     (the reference kernels these fall back to need none).
//   - Inputs that were constants at prepare time are read from the packed copy, not
//     from inputs[i].data; still pass their TensorRefs: where XNNPACK's result
//     differs from NumPy's (a NaN it turned into -inf, a shape it cannot take) the
//     kernel recomputes the node with the reference kernel, which reads them.
//   - Kernels named "xnnpack:..." run XNNPACK operators; "sg:..." are our own SIMD
//     kernels (tanh, gelu, relu, binary arithmetic, batch matmul), used where this
//     XNNPACK lacks the op or turns NaN into -inf/0 where NumPy keeps NaN, and
//     our packed-weight GEMM for dense layers where it is the faster
//     ("sg:packed_gemm_f32(avx512)..." or "(avx2)", dense_gemm.h).
#pragma once

#include <memory>
#include <span>

#include "ops/attrs.h"
#include "ops/op_table.h"
#include "interface/kernel.h"
#include "stagegraph/status.h"

namespace sg::kernels {

// Initializes XNNPACK once per process (thread-safe, idempotent). Returns an
// kUnsupported Status when the CPU lacks what XNNPACK needs; later calls return
// the same Status.
Status xnnpack_init();

// A prepared kernel for this node, or null when this backend does not cover it
// (dtype other than f32, attributes it lacks, a matmul/conv operand that must be a
// constant but is not, XNNPACK not initialized...): the caller then uses
// reference_kernel(op). `inputs` describes the node's inputs in order; their
// static dims may be -1 (symbolic).
std::unique_ptr<PreparedKernel> xnnpack_prepare(ops::OpId op, const ops::Attrs& attrs,
                                                std::span<const InputInfo> inputs);

// A pthreadpool for KernelContext::threadpool: num_threads <= 1, or threads the
// system will not start, give null (run on the caller's thread). Destroy it with
// xnnpack_destroy_threadpool (null is fine) after the last run that uses it.
void* xnnpack_create_threadpool(int num_threads);
void xnnpack_destroy_threadpool(void* pool);

// y[i] = tanh(x[i]) for i < n (y may be x) as our f32 kernels compute it (sg:tanh_f32
// on the best instruction set): the tanh activation of kernels outside this backend
// (kernels/quant/'s fully_connected).
void (*xnnpack_tanh_row())(const float* x, float* y, size_t n);

// parallelize(ctx, task, context, n) (interface/kernel.h) is defined here, over the
// context's team or pool.

}  // namespace sg::kernels
