// The kernel interface. A kernel runs one node: its inputs and outputs are
// already allocated with the shapes the op's rule inferred, and it must not
// allocate (scratch space, where needed, comes from KernelContext).
// Errors found only with data in hand (an integer division by zero, an index out
// of range) are returned as kRuntimeError Status naming the op; the executor adds
// the node's source location.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ops/attrs.h"
#include "ops/op_table.h"
#include "stagegraph/dtype.h"
#include "stagegraph/status.h"

namespace sg::kernels {

inline constexpr int kMaxRank = 8;

// A non-owning view of a dense, C-order tensor.
struct TensorRef {
  DType dtype = DType::kF32;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  void* data = nullptr;

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype); }
  template <class T> T* as() const { return static_cast<T*>(data); }
};

// Threads that wait for work by spinning (runtime/src/team.h). A job of two empty
// tasks costs about 0.2 µs, against 0.7-0.9 µs to wake a pthreadpool on the machine
// this was measured on, so kernels split smaller work over a team than over a pool.
// A Session runs on a team in place of a pool when none of its kernels drives an
// XNNPACK operator, which only a pthreadpool can parallelize.
class Team {
 public:
  using Task = void (*)(void* context, size_t index);
  virtual ~Team() = default;
  virtual size_t threads() const = 0;
  // task(context, i) for every i in [0, n); returns when all have run. Thread t
  // (the caller is 0) first takes the t-th of `threads()` equal runs of indices,
  // then helps with the others: a split of the same work lands on the same threads
  // run after run, and their caches keep their parts. Not re-entrant: a task must
  // not call run.
  virtual void run(Task task, void* context, size_t n) = 0;
};

struct KernelContext {
  // Scratch memory owned by the caller (the Session), at least `scratch_size`
  // bytes; kernels that need more return kInternal.
  void* scratch = nullptr;
  size_t scratch_size = 0;
  // Thread pool for backends that use one (pthreadpool_t), may be null.
  void* threadpool = nullptr;
  // The Session's team, in place of a pool (at most one of the two is set).
  Team* team = nullptr;
  // Where the print op writes a line of text (without the newline); null: stdout.
  void (*print)(void* user, const char* text, size_t size) = nullptr;
  void* print_user = nullptr;
  // Non-zero once the run is asked to end (a cancel, or its timeout), raised by
  // another thread; may be null. A kernel that splits long work into chunks tests
  // it between them (interrupted()) and, when set, stops and returns
  // interrupted_status(): the executor then reports the cancel or the deadline at
  // the node. The outputs are left unfinished, and the run ends.
  const std::atomic<uint32_t>* interrupt = nullptr;
  bool interrupted() const { return interrupt != nullptr && interrupt->load(std::memory_order_relaxed) != 0; }
};

// What a kernel returns when it stops because interrupted() (the executor names
// the cause).
inline Status interrupted_status() { return Status(StatusCode::kCancelled, "interrupted between chunks"); }

using KernelFn = Status (*)(const KernelContext& ctx, const ops::Attrs& attrs,
                            std::span<const TensorRef> inputs, std::span<TensorRef> outputs);

// A kernel's run for one set of operand shapes, fixed when a frame is planned:
// fn(word, operands), the operands (inputs, then outputs) with the shapes given
// to PreparedKernel::fix (or the rank 0 of a scalar kernel), only their data
// pointers new. It checks nothing and cannot fail: what it was made for it runs.
// The executor calls it in place of run() or a KernelFn: a chain of small ops
// pays for neither a virtual call nor the checks, nor a Status.
using FixedFn = void (*)(uint64_t word, const TensorRef* operands);
struct FixedRun {
  FixedFn fn = nullptr;  // null: the kernel has no fixed run for these shapes
  uint64_t word = 0;     // what the kernel worked out from the shapes
};

// The portable reference kernel of every op in the table (never null).
KernelFn reference_kernel(ops::OpId op);

// Whether this build has kernels for `op`: false only for the ops a selective build
// (-DSG_SELECTED_OPS=FILE, selection/selected_ops.h) left out. The runtime refuses,
// on load, a graph that uses such an op. (reference_kernel(op) of such an op is a
// kernel that fails with kInternal.)
bool op_available(ops::OpId op);

// task(context, i) for every i in [0, n), over the context's team or pool, or on
// this thread when it has neither. The XNNPACK backend defines it
// (xnnpack_backend.cc, with pthreadpools); a build without XNNPACK defines it over
// the team alone (selection/parallelize_team.cc).
void parallelize(const KernelContext& ctx, void (*task)(void*, size_t), void* context, size_t n);

// For an elementwise binary op whose operands are declared rank 0 with these
// dtypes: the same arithmetic without broadcasting or dtype dispatch (loop
// counters and tests run it every iteration). Null for other ops and dtypes.
KernelFn scalar_binary_kernel(ops::OpId op, DType in, DType out);
// The same op as a fixed run, for the ops no value makes fail (not integer `//`,
// `%` or `**`, which check their right operand). Null where there is none.
FixedFn scalar_binary_fixed(ops::OpId op, DType in, DType out);

// For an op flagged ops::kDataDependentShape (flat_nonzero): the output dims that
// only its operands' values decide (the nonzero count), which the caller hands to
// the shape rule (ops::ConcreteInferContext::reported) before sizing the output.
Status reported_dims(ops::OpId op, const ops::Attrs& attrs, std::span<const TensorRef> inputs,
                     std::vector<int64_t>& dims);

// Scratch bytes the reference kernel of `op` needs for these operands (usually 0).
size_t reference_scratch_size(ops::OpId op, const ops::Attrs& attrs, std::span<const TensorRef> inputs);

// ---- backends with state (XNNPACK, CUDA) -----------------------------------------
// Parameters once, shapes on change, pointers per run: a backend prepares a node
// once per Session (packing constant weights at creation) and runs it many times.

// What a backend may know about a node's input when preparing it.
struct InputInfo {
  DType dtype = DType::kF32;
  int rank = 0;
  // Static dims where known, -1 where symbolic.
  int64_t shape[kMaxRank] = {};
  // The constant's bytes when the input is a constant of the graph (weights),
  // else null. Valid for the Program's lifetime.
  const void* constant = nullptr;
};

class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  // Inputs and outputs as for KernelFn; inputs have >= 16 readable bytes past
  // their end. May re-plan when shapes differ from the previous run.
  virtual Status run(const KernelContext& ctx, std::span<const TensorRef> inputs,
                     std::span<TensorRef> outputs) = 0;
  // For --profile: "xnnpack:fully_connected", "xnnpack:convolution_nhwc_f32", ...
  virtual const char* name() const = 0;
  // Bytes this kernel holds (packed weights), for per-Session memory reports.
  virtual size_t memory_bytes() const { return 0; }
  // True when the output may be the buffer of an input of the same shape: the kernel
  // reads each element before writing it and never reads an input after writing.
  virtual bool runs_in_place() const { return false; }
  // True when the kernel runs XNNPACK operators, which only a pthreadpool can
  // split. A Session whose kernels all say false runs on a Team instead of a pool.
  virtual bool needs_pool() const { return false; }
  // Its run for operands of exactly these dtypes and shapes, where it has one that
  // needs neither a context nor the kernel's state; it must compute what run()
  // computes. Called when a frame is planned, never on the hot path.
  virtual FixedRun fix(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) const {
    (void)inputs;
    (void)outputs;
    return {};
  }
};

}  // namespace sg::kernels
