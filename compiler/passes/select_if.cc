// If-conversion of the Ifs that only choose values: when neither branch has a
// node -- each result is one of the branch's parameters or a constant, as in
//
//   if tok == EOS:          %nxt = if %c then @then else @else (%start, %tok)
//       tok = start         @then(%start, %tok) -> (%start)
//                           @else(%start, %tok) -> (%tok)
//
// -- the If becomes one where(cond, then value, else value) per result. Nothing
// runs speculatively (there is nothing to run), so no error or effect can appear
// that the If would not have had, and where picks the same value bit for bit. A
// loop whose body held such an If is then straight-line, which the runtime runs
// without leaving the body's frame (bench/models/beam.py: 0.2-0.4 us a step).
// Only where both choices have the If's result type exactly, and it is static: the
// branches of an If may return different shapes under one declared type, and a
// symbolic dim does not bind two values to one shape (a function's flag-lowered
// `return` carries an empty stand-in under the returned value's type until it
// returns), while where needs shapes that broadcast.
#include <algorithm>
#include <optional>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

// Where result `i` of branch `b` comes from: the index of the branch parameter it
// is, or -1 for a constant; nullopt when the branch computes it.
std::optional<int> source_of(const ir::Function& b, size_t i) {
  const int32_t r = b.results[i];
  for (size_t p = 0; p < b.params.size(); ++p)
    if (b.params[p] == r) return int(p);
  if (b.values[size_t(r)].constant >= 0) return -1;
  return std::nullopt;
}

// The value of `f` that result `i` of branch `b` returns, for the If node `n`: the
// If input bound to that parameter, or a new value of `f` naming the same module
// constant. `i` must have a source (source_of).
int32_t chosen_value(ir::Function& f, const ir::Node& n, const ir::Function& b, size_t i) {
  const int p = *source_of(b, i);
  if (p >= 0) return n.inputs[1 + size_t(p)];
  const ir::Value& v = b.values[size_t(b.results[i])];
  const int32_t k = f.add_value(v.type, v.name, v.span);
  f.values[size_t(k)].constant = v.constant;
  return k;
}

// The where nodes that replace the If `n` of `f`, or nothing when it does not qualify.
std::optional<std::vector<ir::Node>> selects_for(const ir::Module& m, ir::Function& f, const ir::Node& n) {
  const ir::Function& then_f = m.functions[size_t(n.functions[0])];
  const ir::Function& else_f = m.functions[size_t(n.functions[1])];
  if (!then_f.nodes.empty() || !else_f.nodes.empty()) return std::nullopt;
  if (then_f.params.size() + 1 != n.inputs.size() || else_f.params.size() + 1 != n.inputs.size() ||
      then_f.results.size() != n.outputs.size() || else_f.results.size() != n.outputs.size())
    return std::nullopt;
  // Check every result before adding any value to f.
  for (size_t i = 0; i < n.outputs.size(); ++i)
    for (const ir::Function* b : {&then_f, &else_f}) {
      const ir::Type& type = b->values[size_t(b->results[i])].type;
      if (!source_of(*b, i) || type != f.values[size_t(n.outputs[i])].type || !static_shape(type))
        return std::nullopt;
    }
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (f.values[size_t(n.inputs[i])].type != then_f.values[size_t(then_f.params[i - 1])].type) return std::nullopt;
  std::vector<ir::Node> selects;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    ir::Node w;
    w.kind = ir::NodeKind::kOp;
    w.op = ops::OpId::Where;
    w.inputs = {n.inputs[0], chosen_value(f, n, then_f, i), chosen_value(f, n, else_f, i)};
    w.outputs = {n.outputs[i]};
    w.span = n.span;
    selects.push_back(std::move(w));
  }
  return selects;
}

}  // namespace

bool select_trivial_ifs(ir::Module& m) {
  bool changed = false;
  for (ir::Function& f : m.functions) {
    if (std::none_of(f.nodes.begin(), f.nodes.end(), [](const ir::Node& n) { return n.kind == ir::NodeKind::kIf; }))
      continue;
    std::vector<ir::Node> nodes;
    nodes.reserve(f.nodes.size());
    bool any = false;
    for (const ir::Node& n : f.nodes) {
      std::optional<std::vector<ir::Node>> selects;
      if (n.kind == ir::NodeKind::kIf && n.functions.size() == 2) selects = selects_for(m, f, n);
      if (!selects) {
        nodes.push_back(n);
        continue;
      }
      any = true;
      for (ir::Node& w : *selects) nodes.push_back(std::move(w));
    }
    if (!any) continue;
    f.nodes = std::move(nodes);
    changed = true;
  }
  return changed;
}

}  // namespace sg::compiler::passes
