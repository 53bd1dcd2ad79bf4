// The memory plan of one function for one signature of argument shapes
// (DESIGN.md #6). Made when a frame is entered with shapes not seen before, then
// cached by the executor, so a warm run neither infers shapes nor allocates:
//   - every value's shape, where the argument shapes decide it (shape rules run
//     once here, not per run);
//   - a place for every value an op produces: an offset in the frame's arena, or
//     "owned" for values that leave the frame (results, arguments of If/While/Call:
//     they move by reference-counted ownership) and values whose shape is known only
//     mid-run (value-dependent shapes, results of control flow);
//   - offsets chosen greedily by size over the values' lifetimes, an elementwise
//     output taking the buffer of an input of its shape that dies at its node.
// Two kinds of request change the plan:
//   - a borrowing plan (a While cond) runs on values its caller keeps: it never
//     releases or overwrites its parameters, and its results stay in the frame
//     (in the arena where possible), to be read there before the frame is popped;
//   - open parameters (dims that keep changing, such as a growing tensor list) are
//     matched by dtype and rank only, so a loop does not plan every iteration
//     anew; what depends on them is inferred at run time.
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
};

struct FramePlan {
  // The signature: the borrow flag, then dtype, rank, dims per parameter (-1: open).
  std::vector<int64_t> key;
  std::vector<Placement> placement;  // per value
  std::vector<size_t> offset;        // per value, for kArena
  std::vector<PlannedShape> shape;   // per value, valid where `known`
  std::vector<uint8_t> known;        // per value
  std::vector<uint8_t> static_node;  // per node: all output shapes known, no inference at run time
  // Per static op node: its operands' TensorRefs (inputs, then outputs) with shapes
  // filled in, so a run only sets data pointers; the scratch its kernel needs.
  std::vector<kernels::TensorRef> refs;
  std::vector<uint32_t> ref_begin;   // per node
  std::vector<size_t> scratch_bytes; // per node
  // Per node: the values to drop after it runs (inputs at their last use, outputs
  // nobody reads), arena values left out: they need no release.
  std::vector<uint32_t> release;
  std::vector<uint32_t> release_begin;  // per node, plus one end entry
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;      // the largest set of arena buffers live at one node
  // Results have the parameters' signature (a While body whose carried types do
  // not change): the loop may keep its plans without checking them again.
  bool preserves_key = false;
  bool open = false;                 // some parameter is open
  int active_frames = 0;             // frames (and loops) using this plan; not evicted while > 0
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
