// Selective builds: which ops this build of the runtime has kernels for, and for
// which dtypes, known at compile time. A build configured with
// -DSG_SELECTED_OPS=FILE (a list written by `graph-inspect --ops GRAPH...`: each
// op's name, then the dtypes of its main operand) defines SG_SELECTED_OPS_INC, a
// generated file of {name, dtypes} pairs; every other build selects every op and
// dtype.
//
// Only the routing code includes this header: kernel_table.cc for the reference
// kernel families, the families' own per-op switches (elementwise_binary.cc,
// elementwise_unary.cc, reduction.cc, ...), xnnpack_backend.cc for XNNPACK, and
// the op table's own routing (infer.cc for the shape and dtype rules,
// check_attrs.cc for the attribute checks). Each names a kernel or rule only
// where its op is selected (`if constexpr`), so what no selected op needs is never
// referenced and the linker leaves it out; a core built with no ops has no rules
// at all. The elementwise, reduction, softmax and cast kernels are also built
// only for the selected dtypes of their operands (dtype_selected), broadcast_to and
// transpose for their sizes (size_selected). Graphs that use an op outside the
// selection are refused on load (kernels::op_available). A selective build with
// ops also runs concrete shapes through the SymDim rules (infer.cc), and its
// binary ops through one strided loop (elementwise_binary.cc): one copy of each.
#pragma once

#include <iterator>
#include <string_view>

#include "ops/op_table.h"
#include "stagegraph/dtype.h"

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

// One line of the list: an op and the dtypes of its main operand, space-separated
// ("f32 i32"); none, or "-", keeps every dtype (a hand-written list of names).
struct SelectedOp {
  std::string_view name;
  std::string_view dtypes;
};

#ifdef SG_SELECTED_OPS_INC
inline constexpr bool kAllOps = false;
// The selected ops, then an empty one (so that an empty selection is an array too).
inline constexpr SelectedOp kSelected[] = {
#include SG_SELECTED_OPS_INC
    {"", ""}};
#else
inline constexpr bool kAllOps = true;
inline constexpr SelectedOp kSelected[] = {{"", ""}};
#endif

constexpr bool known_name(std::string_view name) {
  for (std::string_view n : kOpNames)
    if (n == name) return true;
  return false;
}

// True when f(word) is, for some space-separated word of `words`.
template <class F>
constexpr bool any_word(std::string_view words, F f) {
  while (!words.empty()) {
    const size_t end = words.find(' ');
    const std::string_view word = words.substr(0, end);
    if (!word.empty() && f(word)) return true;
    if (end == std::string_view::npos) break;
    words.remove_prefix(end + 1);
  }
  return false;
}

constexpr bool known_dtype(std::string_view word) {
  if (word == "-") return true;
  for (int i = 0; i < kNumDTypes; ++i)
    if (word == dtype_name(DType(i))) return true;
  return false;
}

// True when every name of the selection is an op of the table and every dtype a
// dtype: a misspelt or removed op in the list is a compile error, not an op
// silently left out.
constexpr bool selection_is_known() {
  for (const SelectedOp& s : kSelected) {
    if (!s.name.empty() && !known_name(s.name)) return false;
    if (any_word(s.dtypes, [](std::string_view w) { return !known_dtype(w); })) return false;
  }
  return true;
}
static_assert(selection_is_known(), "SG_SELECTED_OPS names an op or a dtype the op table does not have");

constexpr bool listed(ops::OpId op) {
  const std::string_view name = kOpNames[int(op)];
  for (const SelectedOp& s : kSelected)
    if (s.name == name) return true;
  return false;
}

// The ops a fused op runs through their kernels (reference/fused.cc):
// fully_connected runs matmul's, conv2d_bias conv2d's. (elementwise_chain runs its
// steps' ops, which graph-inspect --ops lists.)
constexpr bool run_by_listed_fused_op(ops::OpId op) {
  return (op == ops::OpId::MatMul && listed(ops::OpId::FullyConnected)) ||
         (op == ops::OpId::Conv2D && listed(ops::OpId::Conv2DBias));
}

constexpr bool selected(ops::OpId op) {
  if (kAllOps) return true;
  if (std::size(kSelected) == 1) return false;  // none (the core): no name table at run time
  return listed(op) || run_by_listed_fused_op(op);
}

// True when `op` is selected for main operands of dtype `t` (the dtypes
// graph-inspect --ops lists after the op's name: the first input's for the
// elementwise and reduction ops): every dtype in a full build, or where the list
// gives none for the op, or where only a fused op selects it.
constexpr bool dtype_selected(ops::OpId op, DType t) {
  if (kAllOps) return true;
  if (!listed(op)) return run_by_listed_fused_op(op);
  const std::string_view name = kOpNames[int(op)];
  for (const SelectedOp& s : kSelected) {
    if (s.name != name) continue;
    if (!any_word(s.dtypes, [](std::string_view w) { return w != "-"; })) return true;
    if (any_word(s.dtypes, [t](std::string_view w) { return w == dtype_name(t); })) return true;
  }
  return false;
}

// True when `op` is selected for some dtype of `bytes` bytes (the kernels that
// only move elements: broadcast_to, transpose).
constexpr bool size_selected(ops::OpId op, size_t bytes) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_size(DType(i)) == bytes && dtype_selected(op, DType(i))) return true;
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

// In a family's switch over its ops: `return &kernel` where `op` (an OpId
// enumerator's name) is selected, else `return nullptr`; the kernel of an op left
// out is then never instantiated nor linked.
#define SG_RETURN_IF_SELECTED(op, ...)                                                    \
  if constexpr (::sg::ops::selection::selected(::sg::ops::OpId::op)) return &__VA_ARGS__; \
  else return nullptr

namespace sg::kernels {
namespace selection = ::sg::ops::selection;
}  // namespace sg::kernels
