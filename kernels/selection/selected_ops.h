// Selective builds: which ops this build of the runtime has kernels for, known at
// compile time. A build configured with -DSG_SELECTED_OPS=FILE (a list written by
// `graph-inspect --ops GRAPH...`) defines SG_SELECTED_OPS_INC, a generated file of
// op names as string literals; every other build selects every op.
//
// Only the routing code includes this header: kernel_table.cc for the reference
// kernels, xnnpack_backend.cc for XNNPACK, and the op table's own routing
// (infer.cc for the shape and dtype rules, check_attrs.cc for the attribute
// checks). Each names a kernel family or rule only where one of its ops is
// selected (`if constexpr`), so what no selected op needs is never referenced and
// the linker leaves it out; a core built with no ops has no rules at all. Graphs
// that use an op outside the selection are refused on load
// (kernels::op_available).
#pragma once

#include <iterator>
#include <string_view>

#include "ops/op_table.h"

namespace sg::ops::selection {

// Every op's name and flags by OpId, as constants (ops::op_def is a run-time table).
inline constexpr std::string_view kOpNames[] = {
#define SG_OP_NAME(e, name, ver, mn, mx, nout, attrs, flags) name,
    SG_OPS(SG_OP_NAME)
#undef SG_OP_NAME
};
namespace flag_table {
inline constexpr uint32_t kOpFlags[] = {
#define SG_OP_FLAGS(e, name, ver, mn, mx, nout, attrs, flags) uint32_t(flags),
    SG_OPS(SG_OP_FLAGS)
#undef SG_OP_FLAGS
};
}  // namespace flag_table
using flag_table::kOpFlags;

#ifdef SG_SELECTED_OPS_INC
inline constexpr bool kAllOps = false;
// The selected names, then an empty one (so that an empty selection is an array too).
inline constexpr std::string_view kSelectedNames[] = {
#include SG_SELECTED_OPS_INC
    ""};
#else
inline constexpr bool kAllOps = true;
inline constexpr std::string_view kSelectedNames[] = {""};
#endif

constexpr bool known_name(std::string_view name) {
  for (std::string_view n : kOpNames)
    if (n == name) return true;
  return false;
}

// True when every name of the selection is an op of the table: a misspelt or
// removed op in the list is a compile error, not an op silently left out.
constexpr bool selection_is_known() {
  for (std::string_view n : kSelectedNames)
    if (!n.empty() && !known_name(n)) return false;
  return true;
}
static_assert(selection_is_known(), "SG_SELECTED_OPS names an op the op table does not have");

constexpr bool selected(ops::OpId op) {
  if (kAllOps) return true;
  if (std::size(kSelectedNames) == 1) return false;  // none (the core): no name table at run time
  const std::string_view name = kOpNames[int(op)];
  for (std::string_view n : kSelectedNames)
    if (n == name) return true;
  return false;
}

template <ops::OpId... Ops>
constexpr bool any_of() {
  return (selected(Ops) || ...);
}

// Some op with this flag (ops::kElementwiseUnary, ...) is selected.
constexpr bool any_with_flag(uint32_t flag) {
  for (int i = 0; i < ops::kNumOps; ++i)
    if ((kOpFlags[i] & flag) != 0 && selected(ops::OpId(i))) return true;
  return false;
}

}  // namespace sg::ops::selection

namespace sg::kernels {
namespace selection = ::sg::ops::selection;
}  // namespace sg::kernels
