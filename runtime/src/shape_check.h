// Load-time check of an op node's declared output types against the op's shape
// rule (SPEC.md §10: declared shapes that contradict the op rules are refused on
// load, not discovered mid-run). Part of the verifier; one rule call per node,
// nothing read from the data segment.
#pragma once

#include <cstdint>

#include "ops/attrs.h"
#include "ops/op_table.h"
#include "stagegraph/status.h"
#include "stagegraph_generated.h"

namespace sg::runtime {

// The most bytes a declared type may need, counting its static dims only (zeros
// skipped): 1 TiB, beyond any tensor a device of ours holds. An edited dim such
// as 2^40 or 2^62 is refused on load instead of reaching the planner's arithmetic.
inline constexpr int kMaxDeclaredBytesLog2 = 40;
inline constexpr uint64_t kMaxDeclaredBytes = uint64_t(1) << kMaxDeclaredBytesLog2;

// Runs the shape rule of op node `node` (of function `fn`, with decoded `attrs`)
// over its inputs' declared types and checks its declared outputs against the
// result. The rule runs over symbolic dims, as at compile time: every symbol of
// the file is an independent unknown (a symbol such as "N*2" is not expanded) and
// every dynamic scalar input is unknown, so the rule only fails where no binding
// could make the inputs valid, and derives a static output dim only where every
// binding gives it. The node is refused when the rule fails, or when a declared
// output's dtype or rank differs from the rule's, or a static declared dim
// differs from a static dim the rule derives. Symbolic dims on either side are
// left to the run (the executor checks dynamic nodes again). The caller has
// checked indices, arity and attributes. The message has no "node i" prefix.
Status check_declared_outputs(const fb::Graph& g, const fb::Function& fn, const fb::Node& node, ops::OpId op,
                              const ops::Attrs& attrs);

}  // namespace sg::runtime
