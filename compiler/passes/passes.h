// Optimization passes over the IR (issue 7), run by graph-compile after staging
// and before verification and emission:
//   -O0  nothing
//   -O1  algebraic simplification, Ifs that only choose values as selects,
//        constant folding, common subexpression elimination, dead code
//        elimination
//   -O2  -O1, then the hoisting of a counted loop's input projection, fusion
//        (fully_connected, conv2d_bias) and loop-invariant code motion out of
//        While bodies and recursions, then -O1 again, then elementwise chains
//   -O1 and -O2 end by ordering nodes for a lower activation peak; -O0 keeps
//   program order.
// Every pass keeps the module valid for ir::verify and keeps each entry's
// results (values within SPEC §1's tolerance; effects in order).
#pragma once

#include "ir/ir.h"

namespace sg::compiler::passes {

// Each pass returns true when it changed the module.

// Replaces a node whose inputs are all constants (and whose op has no effect) by
// its value, computed with the reference kernels. Never grows the file: a result
// larger than the constants it frees (and than 16 bytes) stays a node.
bool fold_constants(ir::Module& m);

// Removes nodes whose outputs are unused and that have no effect (print, assert,
// or an If/While/Call whose callees have one), the results and parameters of an
// If's branches or a Call's callee (called by that node alone) that nothing reads,
// functions no entry reaches, and values and constants nothing refers to (so value
// ids are renumbered).
bool eliminate_dead_code(ir::Module& m);

// Merges op nodes with the same op, attributes and inputs (never effects), and
// constant values with the same dtype, shape and bytes.
bool eliminate_common_subexpressions(ir::Module& m);

// x*1, x+0, x-0, x/1, reshape/broadcast_to to the same type, identity transpose,
// transpose of a transpose, cast to the same dtype, neg(neg(x)) -- each only when
// the result's type equals the surviving input's; squeeze(matmul(expand_dims(v, 0),
// w), 0) -> matmul(v, w) for a vector v.
bool simplify_algebra(ir::Module& m);

// An If neither of whose branches has a node (each result is a branch parameter
// or a constant) -> where(cond, then value, else value) per result, where both
// have the If's result type.
bool select_trivial_ifs(ir::Module& m);

// matmul(x, w rank 2) + b [+ relu | tanh] -> fully_connected; conv2d(x, w) + b
// [+ relu] -> conv2d_bias (f32, b rank 1 over the output channels).
bool fuse_operations(ir::Module& m);

// A tree of f32 elementwise nodes (add sub mul div maximum minimum tanh gelu relu)
// of one type, whose inner results each feed only the next, with operands of that
// type or scalars -> one elementwise_chain node (up to 16 steps); tensors of a
// static size under 1024 elements stay apart.
bool fuse_elementwise_chains(ir::Module& m);

// In a While that counts t from 0 to xs.shape[0] (no break or return), replaces
// row(xs, t) @ W [+ b] (xs, W, b loop-invariant) by row t of P = xs @ W [+ b],
// computed once before the While and carried into it; (row(xs, t) @ W + y) + b
// brings its b into P too.
bool hoist_row_projections(ir::Module& m);

// Moves pure nodes of a While body whose inputs are loop-invariant before the
// While, passing their results in as extra carried values.
bool hoist_loop_invariants(ir::Module& m);

// Moves pure nodes of a recursive group of functions whose inputs are parameters
// every Call and If inside the group hands on unchanged to the Calls that enter the
// group, passing their results down as extra parameters.
bool hoist_recursion_invariants(ir::Module& m);

// Reorders each function's nodes (topologically, effects kept in place as
// barriers) to lower the peak of live activation bytes, where that lowers
// peak_live_bytes; otherwise leaves the function in program order.
bool order_nodes_for_memory(ir::Module& m);

// The model that ordering minimizes: the most bytes live at once when f's nodes
// run in their current order, a node's outputs counted while its inputs are still
// live; constants and parameters not counted; a symbolic dim counted as 1.
int64_t peak_live_bytes(const ir::Function& f);

// Static bytes of a value of type t by the same model (symbolic dims count as 1).
int64_t value_bytes(const ir::Type& t);

// The passes of optimization level 0, 1 or 2.
void run_pipeline(ir::Module& m, int opt_level);

}  // namespace sg::compiler::passes
