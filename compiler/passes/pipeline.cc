// The pass order of each optimization level. Simplification exposes folding and
// dead nodes (an If whose branches only choose values becomes selects, which fold
// where the condition is constant); CSE runs after folding so equal folded
// constants merge; dead code elimination last renumbers what is left. -O2 first
// hoists input projections out of counted loops, on the plain matmuls staging
// made (the hoisted product then fuses with its bias outside, and the body's
// remaining matmul can take row(P, t) as its bias); it fuses after -O1 has
// removed identities (so a zero bias added by the source is gone), hoists loop
// and recursion invariants, then runs -O1 again on what hoisting exposed, and joins the
// elementwise nodes left into chains. Node ordering comes last, once the set of
// nodes is final.
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

// Rounds of -O1 until nothing changes; each pass shrinks the module or (an If
// made selects) removes a node that cannot come back, so this ends, and the
// bound keeps a pathological module from taking long.
constexpr int kMaxRounds = 4;

void run_o1(ir::Module& m) {
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = simplify_algebra(m);
    changed |= select_trivial_ifs(m);
    changed |= fold_constants(m);
    changed |= eliminate_common_subexpressions(m);
    changed |= eliminate_dead_code(m);
    if (!changed) break;
  }
}

}  // namespace

void run_pipeline(ir::Module& m, int opt_level) {
  if (opt_level <= 0) return;
  run_o1(m);
  if (opt_level >= 2) {
    bool changed = hoist_row_projections(m);
    changed |= fuse_operations(m);
    changed |= hoist_loop_invariants(m);
    changed |= hoist_recursion_invariants(m);
    if (changed) run_o1(m);
    // Last: a chain would hide its steps from hoisting, folding and CSE.
    if (fuse_elementwise_chains(m)) eliminate_dead_code(m);
  }
  order_nodes_for_memory(m);
}

}  // namespace sg::compiler::passes
