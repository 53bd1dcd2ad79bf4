// The memory plan of one function for one signature of argument shapes
// (DESIGN.md #6). Made when a frame is entered with shapes not seen before, then
// cached by the executor, so a warm run neither infers shapes nor allocates:
//   - every value's shape, where the argument shapes decide it (shape rules run
//     once here, not per run);
//   - a place for every value an op produces: an offset in the frame's arena, or
//     "owned" for values that leave the frame (results, arguments of If/While/Call:
//     they move by reference-counted ownership) and values whose shape is known only
//     mid-run (a shape sized by a run-time scalar, results of control flow whose
//     declared dims are symbolic); an index known only at run time does not count
//     (it drops its axis whatever its value, and the kernel checks it), nor does a
//     control-flow result with static declared dims (checked as it arrives);
//   - offsets chosen greedily by size over the values' lifetimes, an elementwise
//     output taking the buffer of an input of its shape that dies at its node.
// Two kinds of request change the plan:
//   - a borrowing plan (a While cond) runs on values its caller keeps: it never
//     releases or overwrites its parameters, and its results stay in the frame
//     (in the arena where possible), to be read there before the frame is popped;
//   - open parameters (dims that keep changing, such as a growing tensor list) are
//     matched by dtype and rank only, so a loop does not plan every iteration
//     anew; what depends on them is inferred at run time.
// The plan also lays out what the executor's hot loop reads: one PlanStep (a
// cache line) per node, and the waves of independent heavy nodes a Session with
// threads runs concurrently (plan_waves.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "node_kernels.h"
#include "program_impl.h"

namespace sg::runtime {

struct PlannedShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  std::span<const int64_t> span() const { return {dims, size_t(rank)}; }
};

enum class Placement : uint8_t {
  kNone,   // a parameter or a constant: not made in this frame
  kArena,  // at `offset` in the frame's arena
  kOwned,  // its own reference-counted buffer
};

struct PlanRequest {
  bool borrow = false;
  // Per parameter, 1 where its dims are left open; empty: none.
  std::vector<uint8_t> open;
  // The most nodes one wave may run at once (the Session's threads); 1: no waves.
  int max_wave = 1;
  // A Session with a device: no arena (each value its own buffer, on the side of
  // the node that made it) and every op a kGeneral step, so that the executor
  // sees each operand and copies it to where its node runs.
  bool general = false;
};

// How the executor runs a node (PlanStep::mode).
enum class StepMode : uint8_t {
  // A static op: its TensorRefs are in the plan, only data pointers are set
  // (`binds`), owned outputs made, and the kernel is called inline.
  kDirect,
  // The same, through the kernel's fixed run for these shapes (kernel.h).
  kFixed,
  // Any other op: shapes inferred at run time, appends, scratch.
  kGeneral,
  kControl,  // If, While, Call
  kWave,     // the first heavy node of a wave: runs the whole wave
  kRan,      // any other node of a wave: it already ran, only its releases remain
};

// Where the data pointer of the operand at FramePlan::refs[ref] comes from.
struct OperandBind {
  uint32_t ref = 0;
  uint32_t value = 0;  // slot binds and owned outputs: the value
  // Arena binds: the offset in the frame's arena. Owned outputs: the dying input
  // (a value in a slot, of the output's dtype and planned shape) whose buffer the
  // output takes when the frame holds it alone, or kNoReuse.
  size_t offset = 0;
};
inline constexpr size_t kNoReuse = ~size_t(0);

// A wave (plan_waves.h) in FramePlan::wave_nodes: `n_pre` light nodes that feed
// its later nodes, run first on the calling thread, then `n_parallel` heavy nodes
// run concurrently, the first of which stands where the wave runs.
struct WaveSpan {
  uint32_t begin = 0;
  uint16_t n_pre = 0;
  uint16_t n_parallel = 0;
};

// Everything a direct node needs, in one cache line, so the hot loop reads one
// line per node beside the operands' TensorRefs.
struct alignas(64) PlanStep {
  // kDirect (and the modes of a wave): `prepared`, or where it is null `fn` with
  // `attrs`. kFixed: `fixed` with its `word`.
  union {
    kernels::KernelFn fn = nullptr;
    kernels::FixedFn fixed;
  };
  kernels::PreparedKernel* prepared = nullptr;
  union {
    const ops::Attrs* attrs = nullptr;
    uint64_t word;
  };
  // The arena whose pointers the arena binds last wrote into the refs: while a
  // frame on the same arena runs the node again they need not be written.
  const uint8_t* bound_arena = nullptr;
  uint32_t ref_begin = 0;      // into FramePlan::refs: inputs, then outputs
  // Into FramePlan::binds: `n_arena` arena binds, `n_slot` inputs read from the
  // frame's slots (parameters, owned values), then `n_owned` outputs that get a
  // buffer of their own (a direct node may write one over a dying input, a wave
  // node never).
  uint32_t bind_begin = 0;
  uint32_t release_begin = 0;  // into FramePlan::release
  uint32_t wave = 0;           // kWave: into FramePlan::waves
  uint16_t n_arena = 0, n_slot = 0, n_owned = 0;
  uint16_t n_release = 0;
  uint16_t n_in = 0, n_out = 0;
  StepMode mode = StepMode::kGeneral;
};
static_assert(sizeof(PlanStep) == 64);

struct FramePlan {
  // First, in two cache lines: what running and entering a frame read.
  std::vector<PlanStep> steps;  // per node
  // Per static op node: its operands' TensorRefs (inputs, then outputs) with shapes
  // filled in, so a run only sets data pointers.
  std::vector<kernels::TensorRef> refs;
  std::vector<OperandBind> binds;
  // Per node: the values to drop after it runs (inputs at their last use, outputs
  // nobody reads), arena values left out: they need no release.
  std::vector<uint32_t> release;
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;      // the largest set of arena buffers live at one node
  int active_frames = 0;             // frames (and loops) using this plan; not evicted while > 0
  // Results have the parameters' signature (a While body whose carried types do
  // not change): the loop may keep its plans without checking them again.
  bool preserves_key = false;
  bool open = false;                 // some parameter is open

  // The signature: the borrow flag, then dtype, rank, dims per parameter (-1: open).
  std::vector<int64_t> key;
  // The values a frame on this plan may hold in its slots (parameters and owned
  // values): what popping it must release. Arena values never occupy a slot.
  std::vector<uint32_t> held;
  std::vector<Placement> placement;  // per value
  std::vector<size_t> offset;        // per value, for kArena
  std::vector<PlannedShape> shape;   // per value, valid where `known`
  std::vector<uint8_t> known;        // per value
  std::vector<uint8_t> static_node;  // per node: all output shapes known, no inference at run time
  std::vector<uint32_t> ref_begin;   // per node, into `refs`
  std::vector<size_t> scratch_bytes; // per node: the scratch its kernel needs
  std::vector<uint32_t> release_begin;  // per node, plus one end entry
  std::vector<WaveSpan> waves;
  std::vector<uint32_t> wave_nodes;
};

// True when the parameters bound in `slots` have the plan's signature.
bool plan_matches(const FramePlan& plan, const FunctionImpl& fn, const std::vector<Tensor>& slots, bool borrow);

// Plans `fn` for the parameters bound in `slots`. `kernels` tells which nodes may
// write their output over an input.
FramePlan make_plan(const FunctionImpl& fn, std::span<const NodeKernel> kernels, const std::vector<Tensor>& slots,
                    const PlanRequest& request = {});

// The parameters to leave open in the next plan of `fn`: none while fewer than
// `threshold` of `plans` share this signature's borrow flag, dtypes and ranks, else
// those whose dims differ between them and `slots` (or are open in one of them).
std::vector<uint8_t> varying_params(const std::vector<std::unique_ptr<FramePlan>>& plans, const FunctionImpl& fn,
                                    const std::vector<Tensor>& slots, bool borrow, size_t threshold);

}  // namespace sg::runtime
