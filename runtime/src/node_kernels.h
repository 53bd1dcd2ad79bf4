// NodeKernels: the kernel each op node of a Program runs in one Session. Chosen once
// at Session creation (DESIGN.md #8): a backend's prepared kernel where it covers
// the node (XNNPACK, packing constant weights now), else the reference kernel.
// Prepared kernels hold per-Session state, so they belong to this object and never
// to the immutable Program; the thread pool they run on is owned here as well.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "program_impl.h"
#include "interface/kernel.h"
#include "stagegraph/custom_op.h"
#include "team.h"

namespace sg::runtime {

struct NodeKernel {
  kernels::KernelFn fn = nullptr;              // used when `prepared` is null
  kernels::PreparedKernel* prepared = nullptr;  // owned by NodeKernels
  // The kernel may write its output over an input of the same shape (the
  // planner's in-place reuse): true for the reference elementwise kernels.
  bool in_place_safe = false;
  // An axis-0 Concatenate whose first input is a parameter that dies there (a
  // tensor list growing in a loop): the executor appends to that buffer in place
  // when it can, without calling the kernel.
  bool appends = false;
  // `fn` is the rank-0 kernel of an elementwise binary op (scalar_binary_kernel).
  bool scalar = false;
  // Its fixed run, where the op cannot fail (scalar_binary_fixed), else null.
  kernels::FixedFn scalar_fixed = nullptr;
};

// `asked`, or fewer: no more than the CPUs the calling thread may run on (its
// affinity mask, as taskset or a container's cpuset leave it). Threads beyond
// them cannot run at once, and a pool's or a team's workers spin between tasks:
// on one CPU, two of them made mlp at batch 1 take 16 ms a run instead of 0.03.
int usable_threads(int asked);

class NodeKernels {
 public:
  // `shared_pool` (a ThreadPool's pthreadpool_t, of `shared_threads`): kernels run on
  // it, and `num_threads` is ignored; null: a pool or team of this Session's own.
  // `custom_ops`: the kernels of the program's custom ops (may be null when it has none).
  NodeKernels(const ProgramImpl& program, int num_threads, void* shared_pool = nullptr, int shared_threads = 1,
              const CustomOps* custom_ops = nullptr);
  ~NodeKernels();
  NodeKernels(const NodeKernels&) = delete;
  NodeKernels& operator=(const NodeKernels&) = delete;

  const NodeKernel& at(uint32_t fn, uint32_t node) const { return table_[fn][node]; }
  const std::vector<NodeKernel>& of(uint32_t fn) const { return table_[fn]; }
  // "reference", "reference:scalar", a prepared kernel's name, or "control-flow".
  const char* name(uint32_t fn, uint32_t node) const;
  // The Session's threads: a pool (pthreadpool_t), or a team, or neither (one thread).
  void* threadpool() const { return threadpool_; }
  kernels::Team* team() const { return team_.get(); }
  // Threads of the pool or team (1 without one): the most nodes the executor runs at once.
  int num_threads() const { return num_threads_; }
  // Bytes held by prepared kernels (packed weights): what one more Session costs
  // beyond its arenas.
  size_t memory_bytes() const;

 private:
  std::vector<std::vector<NodeKernel>> table_;
  std::vector<std::unique_ptr<kernels::PreparedKernel>> prepared_;
  void* threadpool_ = nullptr;
  [[maybe_unused]] bool owns_pool_ = false;  // used only with XNNPACK
  std::unique_ptr<SpinTeam> team_;
  int num_threads_ = 1;
};

}  // namespace sg::runtime
