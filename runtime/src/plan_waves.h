// Waves: sets of independent heavy nodes of one function that a Session with
// threads runs concurrently, each node's kernel on one thread (the scheduler of
// DESIGN.md's Session, beside the memory plan of #6). Found per memory plan, where
// the argument shapes fix every static node's cost:
//   - a node may join a wave when it is a static op, no effect (Print/Assert), no
//     tensor-list append, and its kernel needs no scratch; it is heavy when its
//     estimated work (FLOPs of a matmul, fully connected or convolution; elements
//     touched by anything else) reaches kWaveMinWork;
//   - a wave runs where its first heavy node stands. A later heavy node joins it
//     when each of its inputs is made before that point, or by a light node whose
//     own inputs are: such a node is hoisted, and runs first, on the calling thread.
//     So no node of a wave depends on another, and each is merely moved earlier,
//     past nodes that do not read it;
//   - control flow (If/While/Call) and effects end a wave: nothing moves across
//     them, so an error or a print happens in program order.
// The memory plan then makes each wave node's outputs live from the wave's start,
// and never runs a wave node in place, so no two nodes of a wave share arena space.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory_plan.h"
#include "node_kernels.h"
#include "program_impl.h"

namespace sg::runtime {

// About the work of a 64x64x128 matmul: below it, handing a node to another
// thread costs more than it saves.
inline constexpr uint64_t kWaveMinWork = uint64_t(1) << 20;

struct Waves {
  std::vector<uint32_t> nodes;  // per wave: its hoisted light nodes, then its heavy ones, each in program order
  std::vector<WaveSpan> spans;
};

// Estimated work of node `i` of `fn` on the shapes of `plan` (all known).
uint64_t estimated_work(const FunctionImpl& fn, const FramePlan& plan, size_t i);

// The waves of `fn` under `plan` (its shapes and static_node set), at most
// `max_wave` nodes each; none when max_wave < 2.
Waves find_waves(const FunctionImpl& fn, std::span<const NodeKernel> kernels, const FramePlan& plan, int max_wave);

}  // namespace sg::runtime
