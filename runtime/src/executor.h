// The executor: runs a graph function with an explicit, heap-allocated frame stack.
// If, While and Call push frames and the loop continues with the top frame, so a
// graph's recursion depth never consumes the C++ stack; Call frames are bounded by
// max_call_depth. Tensors cross frames as reference-counted handles, never copied.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/infer.h"
#include "program_impl.h"
#include "reference/kernel.h"

namespace sg::runtime {

struct NodeStats {
  uint64_t calls = 0;
  uint64_t total_ns = 0;
};

class Executor {
 public:
  Executor(const ProgramImpl& program, Allocator* allocator, int max_call_depth, bool profile);

  // Runs function `fn` with `args` bound to its parameters; on success `results`
  // holds its results in order. On failure every frame is released.
  Status run(uint32_t fn, std::vector<Tensor>& args, std::vector<Tensor>& results);

  // Per function, per node; empty unless profiling.
  const std::vector<std::vector<NodeStats>>& stats() const { return stats_; }

 private:
  // What a frame's caller does with its results.
  enum class Role : uint8_t { kEntry, kIfBranch, kWhileCond, kWhileBody, kCall };
  struct Frame {
    uint32_t fn = 0;
    uint32_t pc = 0;  // the node running; a caller stays on its If/While/Call node
    Role role = Role::kEntry;
    std::vector<Tensor> slots;    // one per value of the function
    std::vector<Tensor> carried;  // a While node's loop-carried values between frames
    uint64_t start_ns = 0;        // when the pending control-flow node started
  };

  Status loop(std::vector<Tensor>& results);
  Status run_op(Frame& frame, const FunctionImpl& fn, const NodeInfo& node);
  Status start_control(const NodeInfo& node);
  Status deliver(Role role);
  void push_frame(uint32_t fn, Role role, std::vector<Tensor>& args);
  void pop_frame();
  void finish_node(Frame& frame, const NodeInfo& node, std::vector<Tensor>& outputs);
  Result<bool> read_condition(const Tensor& t, const NodeInfo& node, const char* what) const;
  void gather(const Frame& frame, const FunctionImpl& fn, const uint32_t* begin, const uint32_t* end,
              std::vector<Tensor>& out) const;
  void release_inputs(Frame& frame, const NodeInfo& node);
  static const Tensor& value(const Frame& frame, const FunctionImpl& fn, uint32_t v) {
    const ValueInfo& info = fn.values[v];
    return info.is_constant ? info.constant : frame.slots[v];
  }

  const ProgramImpl& program_;
  Allocator* allocator_;
  int max_call_depth_;
  bool profile_;
  int active_calls_ = 0;
  std::vector<Frame> stack_;
  std::vector<std::vector<Tensor>> spare_slots_;  // reused by later frames
  std::vector<std::vector<NodeStats>> stats_;

  // Per-node scratch, reused so that steady-state nodes allocate only outputs.
  std::vector<Tensor> args_;
  std::vector<Tensor> returned_;
  std::vector<ops::TensorType<int64_t>> in_types_;
  std::vector<ops::TensorType<int64_t>> out_types_;
  std::vector<std::optional<int64_t>> scalars_;
  std::vector<kernels::TensorRef> in_refs_;
  std::vector<kernels::TensorRef> out_refs_;
  Tensor kernel_scratch_;
  ops::ConcreteInferContext infer_ctx_;
};

}  // namespace sg::runtime
