// The executor: runs a graph function with an explicit, heap-allocated frame stack.
// If, While and Call push frames and the loop continues with the top frame, so a
// graph's recursion depth never consumes the C++ stack; Call frames are bounded by
// max_call_depth. Tensors cross frames as reference-counted handles, never copied.
//
// A While loop moves its carried values, never sharing them. Its cond frame stays
// pushed for the whole loop and holds them between iterations: it borrows them
// (a borrowing plan never releases or overwrites a parameter) and its bool is
// read where it lies in its frame; the body frame, pushed above it, takes them
// over and moves its results back into the cond's parameters, and the cond runs
// again from its first node. Once a body's plan maps the carried types onto
// themselves, the loop pins the body plan and stops checking plans; if the cond
// pushes no frames itself, the body frame then stays pushed and the cond runs
// beneath it, so an iteration pushes and pops nothing.
//
// A Concatenate on axis 0 whose first input is a parameter dying there (a tensor
// list, or a relaxed dim grown by concatenation, carried by a loop) appends in
// place when the frame holds that buffer alone and it has room, and otherwise
// copies into a buffer with room to spare, so n appends cost O(log n) allocations.
//
// The hot loop does no string work, no FlatBuffers decoding and, once warm, no
// allocation: kernels are resolved per Session (NodeKernels), each frame runs on a
// cached memory plan (memory_plan.h) that fixes shapes and arena offsets, frames and
// their vectors are reused, arenas come from the FrameStack and escaping values from
// the BufferCache. A plan's node whose operands it fully placed is a "direct" step:
// one cache line holding its kernel, where its TensorRefs lie and where their data
// pointers come from; arena pointers are rewritten only when the frame's arena moved,
// so a straight-line node costs a compare, its parameters' pointers and the call.
//
// With more than one thread, a plan's waves of independent heavy nodes
// (plan_waves.h) run as tasks on the Session's thread pool (executor_wave.cc).
//
// With a device (set_device, executor_device.cc), the same frames and control
// flow run on the host, and each op node runs where DevicePlacement puts it: its
// operands are copied to that side where they lie on the other (a frame keeps
// the copy beside the value, so each crosses once per frame), its outputs are
// made there, and the entry's results come back to the host. Plans are then
// general (no arena, no direct steps, waves or register loops).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "buffer_cache.h"
#include "device_placement.h"
#include "frame_stack.h"
#include "memory_plan.h"
#include "node_kernels.h"
#include "ops/infer.h"
#include "program_impl.h"
#include "interface/kernel.h"

namespace sg::runtime {

struct NodeStats {
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t tape_bytes = 0;  // a While or Call: the most bytes of gradient tapes a run of it left
};

// Arena use of a run: the most bytes the active frames' arenas held at once, beside
// the sum of their plans' lower bounds at that moment.
struct ArenaUse {
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;
};

// Copies between host and device that a function's frames made.
struct TransferStats {
  uint64_t uploads = 0, downloads = 0;
  uint64_t upload_ns = 0, download_ns = 0;
};

class Executor {
 public:
  // `concurrent`: run waves of independent nodes when the kernels have threads.
  Executor(const ProgramImpl& program, const NodeKernels& kernels, Allocator* allocator, int max_call_depth,
           bool profile, bool concurrent = true);
  ~Executor();

  // Runs function `fn` with `args` (moved from) bound to its parameters; on success
  // `results` holds its results in order. On failure every frame is released.
  Status run(uint32_t fn, std::span<Tensor> args, std::vector<Tensor>& results);

  // Per function, per node; empty unless profiling.
  const std::vector<std::vector<NodeStats>>& stats() const { return stats_; }
  ArenaUse last_arena_use() const { return peak_; }
  ScheduleStats schedule_stats() const {
    ScheduleStats s = schedule_counts_;
    s.threads = kernels_.num_threads();
    s.team = kernels_.team() != nullptr;
    return s;
  }
  size_t frame_stack_bytes() const { return frame_stack_.reserved_bytes(); }
  size_t cached_bytes() const { return cache_.cached_bytes(); }
  // Where the executor's owned values are allocated (a cache over the allocator it
  // was given): Session::output hands a result over by moving its storage from here
  // to that allocator, and takes it back here once the caller let go.
  Allocator* value_allocator() { return &cache_; }

  // Interruption (Session::cancel, SessionOptions::run_timeout): one flag, raised
  // by another thread (the caller's, or the Session's RunTimer at the deadline). A
  // run tests it before each node, at each loop back-edge and at each Call entry
  // (a relaxed load), and kernels that split long work test it between chunks
  // (KernelContext::interrupt).
  void request_cancel() { interrupt_.fetch_or(kCancelRequested, std::memory_order_relaxed); }
  void expire_deadline() { interrupt_.fetch_or(kDeadlinePassed, std::memory_order_relaxed); }
  // Clears both: a run's end ends its requests.
  void clear_cancel() { interrupt_.store(0, std::memory_order_relaxed); }
  // For the message of a run ended by its deadline; 0: none.
  void set_timeout(uint64_t timeout_ns) { timeout_ns_ = timeout_ns; }
  // Runs op nodes where `placement` puts them on `device` (both outlive the
  // executor's tensors); before the first run. `name` for messages ("test").
  void set_device(DeviceContext* device, const DevicePlacement* placement, std::string name);
  // Per function; empty without a device.
  const std::vector<TransferStats>& transfers() const { return transfers_; }
  // Where the print op writes (KernelContext::print); null: stdout.
  void set_print(void (*print)(void* user, const char* text, size_t size), void* user) {
    direct_ctx_.print = print;
    direct_ctx_.print_user = user;
  }

 private:
  // A copy of a frame's value on the other side (host or device), valid while
  // `source` (which it keeps alive, so its buffer is not reused) is the value's.
  struct Mirror {
    Tensor source;
    Tensor copy;
  };
  // What a frame's caller does with its results.
  enum class Role : uint8_t { kEntry, kIfBranch, kWhileCond, kWhileBody, kCall };
  struct Frame {
    uint32_t fn = 0;
    uint32_t pc = 0;  // the node running; a caller stays on its If/While/Call node
    Role role = Role::kEntry;
    std::vector<Tensor> slots;    // one per value of the function
    std::vector<Tensor> carried;  // a finished While node's values, on their way to its outputs
    FramePlan* plan = nullptr;
    const NodeKernel* kernels = nullptr;  // of this function, by node
    uint8_t* arena = nullptr;
    FrameStack::Mark mark;
    uint64_t start_ns = 0;  // when the pending control-flow node started
    bool borrowed = false;  // a While cond: it must not release or give away its parameters
    // A While cond frame: the body plan it holds pinned once the loop is stable
    // (its cond and body plans fit every later iteration).
    FramePlan* body_plan = nullptr;
    bool loop_stable = false;
    // A stable loop whose cond has no control-flow node: the body frame stays
    // pushed between iterations and the cond runs beneath it (next_iteration).
    bool cond_beneath = false;
    std::vector<Mirror> mirrors;  // per value, with a device
  };
  // Per function: what the executor precomputes from the graph.
  struct FunctionFacts {
    // Which results, and which inputs of each control-flow node, may be moved out
    // of their slot (their last use, not repeated later in the list).
    std::vector<uint8_t> results;
    std::vector<std::vector<uint8_t>> inputs;  // per node
    std::vector<uint8_t> is_param;             // per value
  };

  Status loop(std::vector<Tensor>& results);
  // True when the run is asked to end (check_interrupt says how).
  bool should_poll() const { return interrupt_.load(std::memory_order_relaxed) != 0; }
  // kCancelled or kDeadlineExceeded at `node` (null: the entry, before any node), or OK.
  Status check_interrupt(const NodeInfo* node) const;
  // The status of `node` whose kernel failed with `failed`: the cancel or deadline
  // that ended it when one was raised meanwhile (a kernel stops between chunks),
  // else its own error.
  Status kernel_failed(const NodeInfo& node, const Status& failed) const;
  // The node a frame at `index` stands at: its running node, or for a finished
  // frame (a loop's cond or body), the node of the frame below that runs it.
  const NodeInfo* node_at(size_t index) const;
  // The node of `fn` whose output is the largest value `plan` puts in the arena.
  const NodeInfo* largest_arena_value_node(uint32_t fn, const FramePlan& plan) const;
  // Runs the top frame's op nodes from its pc until its end or a control-flow node.
  template <bool kProfile>
  Status run_steps(Frame& frame);
  // Runs the wave `lead` starts (plan_waves.h): binds its nodes' operands here,
  // then runs their kernels as tasks on the thread pool, each on one thread.
  Status run_wave(Frame& frame, const PlanStep& lead);
  Status run_op(Frame& frame, const FunctionImpl& fn, const NodeInfo& node);
  // run_op with a device (executor_device.cc): the node on its side, operands copied there.
  Status run_placed(Frame& frame, const FunctionImpl& fn, const NodeInfo& node);
  Status run_host_kernel(Frame& frame, const NodeInfo& node, std::span<const kernels::TensorRef> in,
                         std::span<kernels::TensorRef> out);
  // Value `v` of `frame` on the host / on the device: itself, or its copy there.
  Result<const Tensor*> host_copy(Frame& frame, const FunctionImpl& fn, uint32_t v, const NodeInfo* node);
  Result<const Tensor*> device_copy(Frame& frame, const FunctionImpl& fn, uint32_t v, const NodeInfo& node);
  // A condition's bool, wherever it lies.
  Result<bool> condition(Frame& frame, const FunctionImpl& fn, uint32_t v, const NodeInfo& node, const char* what);
  // The entry's results in host memory.
  Status results_to_host(uint32_t fn, std::vector<Tensor>& results);
  Status download(uint32_t fn, const Tensor& from, Tensor& to);
  // Kernel scratch of at least `bytes`, in ctx.
  Status reserve_scratch(size_t bytes, const NodeInfo& node, kernels::KernelContext& ctx);
  // The append fast path of run_op; `handled` false: run the node the usual way.
  Status run_append(Frame& frame, const FunctionImpl& fn, const NodeInfo& node, bool& handled);
  kernels::TensorRef operand(const Frame& frame, const FunctionImpl& fn, uint32_t v) const;
  void record(const Frame& frame, uint32_t pc, uint64_t start);
  Status infer_dynamic(const FunctionImpl& fn, const NodeInfo& node);
  Status make_owned(Frame& frame, const NodeInfo& node, uint32_t v, DType dtype, std::span<const int64_t> shape);
  Status start_control(const NodeInfo& node);
  // A finished cond frame (on top): reads its bool, then pushes the body with the
  // carried values, or hands them to the caller and ends the loop.
  Status finish_cond();
  // A finished body frame (on top, its cond below): moves its results into the
  // cond's parameters and restarts the cond.
  Status finish_body();
  // finish_body of a loop whose cond runs beneath its body: runs cond and body
  // in turn on their frames until the cond is false (then pops the body) or the
  // body reaches a control-flow node (left to the main loop).
  Status next_iteration(Frame& body, Frame& cond);
  // A finished body's results into its cond's parameters.
  void move_results(Frame& body, Frame& cond);
  // next_iteration of a loop whose cond and body are straight lines of direct
  // steps carrying only small values (counters, flags, accumulators): runs it to
  // its end on a register file (executor_registers.cc). `ran` false: not such a
  // loop, nothing changed.
  Status run_in_registers(Frame& body, Frame& cond, bool& ran);
  // Appends `frame`'s steps to reg_ops_ with operand addresses fixed for the loop;
  // false where an owned value does not fit a register.
  bool bind_registers(const Frame& frame, uint8_t*& next, const uint8_t* end);
  // reg_ops_ (the cond's first `n_cond`, then the body's) and reg_back_ as
  // reg_prog_; returns where the cond starts.
  size_t compile_registers(size_t n_cond, const uint8_t* flag, bool reads_carried);
  // Runs reg_prog_ from `entry` until the cond's flag is false.
  Status run_register_program(size_t entry);
  // The bool a finished cond frame computed, for While `node`.
  Result<bool> loop_condition(Frame& cond, const NodeInfo& node);
  // Hands a finished If branch's or Call's results (returned_) to the caller, now on top.
  Status deliver(Role role);
  // Pushes a frame with empty slots; it may move the frames.
  Frame& enter(uint32_t fn, Role role);
  // Before a Call: when the frames are at their deepest so far, asks the host
  // allocator for what a new frame costs (its vectors, and the frame vector's
  // growth), which reports exhaustion where growing a std::vector would abort.
  Status reserve_frame(const NodeInfo& call, uint32_t callee);
  // Gives `frame` (on top) its plan (`plan`, or the one matching its parameters
  // when null) and its arena; leave_plan undoes it.
  Status arena_failure(uint32_t fn, const FramePlan& plan, const Status& cause) const;
  Status enter_plan(Frame& frame, FramePlan* plan);
  void leave_plan(Frame& frame);
  Status push_frame(uint32_t fn, Role role, std::span<Tensor> args);
  void pop_frame();
  Result<FramePlan*> find_plan(uint32_t fn, const std::vector<Tensor>& slots, bool borrow);
  static void unpin_loop(Frame& frame);
  Status finish_node(Frame& frame, const NodeInfo& node, std::vector<Tensor>& outputs);
  Result<bool> read_condition(const kernels::TensorRef& t, const NodeInfo& node, const char* what) const;
  // Appends the values `begin..end` of `frame` to `out`: moved where `movable`
  // says the slot dies with this use (and a borrowing frame does not merely
  // borrow it), else shared.
  void gather(Frame& frame, const FunctionImpl& fn, const uint32_t* begin, const uint32_t* end,
              const uint8_t* movable, std::vector<Tensor>& out) const;
  void release_inputs(Frame& frame, const NodeInfo& node);
  Frame& top() { return frames_[depth_ - 1]; }
  static const Tensor& value(const Frame& frame, const FunctionImpl& fn, uint32_t v) {
    const ValueInfo& info = fn.values[v];
    return info.is_constant ? info.constant : frame.slots[v];
  }

  // Declared first, destroyed last: every tensor below may live in it.
  BufferCache cache_;
  FrameStack frame_stack_;
  Allocator* host_;
  const ProgramImpl& program_;
  const NodeKernels& kernels_;
  int max_call_depth_;
  bool profile_;
  static constexpr uint32_t kCancelRequested = 1, kDeadlinePassed = 2;
  std::atomic<uint32_t> interrupt_{0};
  uint64_t timeout_ns_ = 0;
  int active_calls_ = 0;
  size_t max_values_ = 0;  // the most values of any function
  size_t max_arity_ = 0;   // the most operands or results of any node or function
  std::vector<Frame> frames_;  // frames_[0, depth_) are active; the rest keep their capacity
  size_t depth_ = 0;
  // Per function: its cached plans (stable addresses: frames point at them).
  std::vector<std::vector<std::unique_ptr<FramePlan>>> plans_;
  std::vector<FramePlan*> last_plan_;
  std::vector<FunctionFacts> facts_;
  ArenaUse live_, peak_;
  int max_wave_ = 1;  // the most nodes a wave may hold: the pool's threads
  ScheduleStats schedule_counts_;
  std::vector<std::vector<NodeStats>> stats_;
  // With a device (set_device): its context, placement and name, the constants
  // its nodes read (uploaded once), and the copies made.
  DeviceContext* device_ = nullptr;
  const DevicePlacement* placement_ = nullptr;
  std::string device_name_;
  std::vector<std::vector<Tensor>> device_constants_;
  std::vector<TransferStats> transfers_;

  // A loop running its cond beneath its body (next_iteration): the slots each
  // iteration moves results back from and carried values forth to, and drops.
  struct CarriedMove {
    const Tensor* from;  // a constant when `move` is false
    Tensor* to;
    bool move;
  };
  std::vector<CarriedMove> loop_back_, loop_forth_;
  std::vector<Tensor*> loop_drop_;

  // A loop on a register file (run_in_registers): its cond's steps, then its
  // body's, with TensorRefs whose data pointers stay fixed while it runs.
  struct RegisterOp {
    kernels::KernelFn fn;
    kernels::PreparedKernel* prepared;
    const ops::Attrs* attrs;
    kernels::FixedFn fixed;  // in place of the three above where not null
    uint64_t word;
    uint32_t ref_begin;  // into reg_refs_: inputs, then outputs
    uint16_t n_in, n_out;
    uint32_t function, node;  // where an error is reported
  };
  // A body result on its way back to the register of carried value `k`.
  struct RegisterCopy {
    const uint8_t* from;
    uint32_t k;
    uint32_t bytes;
  };
  // The loop as one instruction sequence (executor_registers.cc): scalar ops on
  // register addresses, calls of reg_ops_[index], copies, and the branch back.
  struct RegisterInst {
    uint32_t code;
    uint32_t index;  // kCall: into reg_ops_; a copy: its bytes
    uint8_t* out;
    const uint8_t* a;
    const uint8_t* b;
  };
  std::vector<RegisterOp> reg_ops_;
  std::vector<RegisterInst> reg_prog_;
  std::vector<kernels::TensorRef> reg_refs_;
  std::vector<RegisterCopy> reg_back_;
  std::vector<uint8_t*> reg_params_;  // per carried value, its register
  std::vector<uint8_t*> reg_staging_;  // and its staging register
  std::vector<void*> reg_addr_;       // per value of the frame being bound
  Tensor reg_file_;

  // Per-node scratch, sized once so that a steady-state node allocates nothing.
  std::vector<Tensor> args_;
  std::vector<Tensor> returned_;
  std::vector<kernels::TensorRef> in_refs_;
  std::vector<kernels::TensorRef> out_refs_;
  std::vector<ops::TensorType<int64_t>> in_types_;
  std::vector<ops::TensorType<int64_t>> out_types_;
  std::vector<std::optional<int64_t>> scalars_;
  Tensor kernel_scratch_;
  kernels::KernelContext direct_ctx_;  // what every direct node's kernel gets
  std::vector<Status> wave_status_;   // per node of the running wave
  std::vector<uint64_t> wave_ns_;
  ops::ConcreteInferContext infer_ctx_;
  std::vector<int64_t> reported_;  // kernels::reported_dims of a data-dependent node
};

}  // namespace sg::runtime
