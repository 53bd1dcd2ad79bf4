// Common subexpression elimination within each function. A function's nodes run
// in order with no nested regions, so an earlier node's outputs are available to
// every later node: a later duplicate is replaced by the earlier one.
#include <map>
#include <tuple>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

// Constant values with the same dtype, shape and bytes become one value, so that
// nodes over equal constants can merge.
bool merge_constant_values(const ir::Module& m, ir::Function& f) {
  std::map<std::tuple<DType, std::vector<int64_t>, std::vector<uint8_t>>, int32_t> first;
  bool changed = false;
  for (size_t v = 0; v < f.values.size(); ++v) {
    const ir::Constant* k = constant_of(m, f, int32_t(v));
    if (k == nullptr) continue;
    auto [it, inserted] = first.try_emplace(std::make_tuple(k->dtype, k->shape, k->bytes), int32_t(v));
    if (inserted) continue;
    // A value type names the constant's shape, so the two types are equal.
    replace_uses(f, int32_t(v), it->second);
    changed = true;
  }
  return changed;
}

bool merge_nodes(ir::Function& f) {
  std::map<std::pair<ops::OpId, std::vector<int32_t>>, std::vector<size_t>> seen;
  std::vector<bool> erase(f.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const ir::Node& n = f.nodes[i];
    if (n.kind != ir::NodeKind::kOp || ops::has_flag(n.op, ops::kSideEffect)) continue;
    std::vector<size_t>& candidates = seen[{n.op, n.inputs}];
    bool merged = false;
    for (size_t j : candidates) {
      const ir::Node& e = f.nodes[j];
      if (e.attrs != n.attrs || e.outputs.size() != n.outputs.size()) continue;
      bool same_types = true;
      for (size_t o = 0; o < n.outputs.size(); ++o)
        same_types &= f.values[size_t(e.outputs[o])].type == f.values[size_t(n.outputs[o])].type;
      if (!same_types) continue;
      for (size_t o = 0; o < n.outputs.size(); ++o) replace_uses(f, n.outputs[o], e.outputs[o]);
      erase[i] = merged = changed = true;
      break;
    }
    if (!merged) candidates.push_back(i);
  }
  erase_nodes(f, erase);
  return changed;
}

}  // namespace

bool eliminate_common_subexpressions(ir::Module& m) {
  bool changed = false;
  for (ir::Function& f : m.functions) {
    changed |= merge_constant_values(m, f);
    changed |= merge_nodes(f);
  }
  return changed;
}

}  // namespace sg::compiler::passes
