// Dead code elimination: dead nodes, results and parameters of a sole-user If or
// Call that nothing reads, unreachable functions, unused values and
// constants. Value, function and constant ids are renumbered densely, in order.
#include <algorithm>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

// Removes the nodes of f that nothing uses and that have no effect.
bool remove_dead_nodes(ir::Function& f, const std::vector<bool>& effects) {
  std::vector<bool> live(f.values.size(), false);
  for (int32_t v : f.results) live[size_t(v)] = true;
  std::vector<bool> erase(f.nodes.size(), false);
  bool changed = false;
  for (size_t i = f.nodes.size(); i-- > 0;) {
    const ir::Node& n = f.nodes[i];
    bool needed = node_has_effect(n, effects);
    for (int32_t v : n.outputs) needed = needed || live[size_t(v)];
    if (!needed) {
      erase[i] = changed = true;
      continue;
    }
    for (int32_t v : n.inputs) live[size_t(v)] = true;
  }
  erase_nodes(f, erase);
  return changed;
}

// Keeps parameters, node outputs and the constants something uses.
bool compact_values(ir::Function& f) {
  std::vector<bool> keep(f.values.size(), false);
  for (int32_t v : f.params) keep[size_t(v)] = true;
  for (const ir::Node& n : f.nodes) {
    for (int32_t v : n.inputs) keep[size_t(v)] = true;
    for (int32_t v : n.outputs) keep[size_t(v)] = true;
  }
  for (int32_t v : f.results) keep[size_t(v)] = true;
  std::vector<int32_t> remap(f.values.size(), -1);
  std::vector<ir::Value> values;
  for (size_t v = 0; v < f.values.size(); ++v) {
    if (!keep[v]) continue;
    remap[v] = int32_t(values.size());
    values.push_back(std::move(f.values[v]));
  }
  const bool changed = values.size() != f.values.size();
  f.values = std::move(values);
  for (int32_t& v : f.params) v = remap[size_t(v)];
  for (int32_t& v : f.results) v = remap[size_t(v)];
  for (ir::Node& n : f.nodes) {
    for (int32_t& v : n.inputs) v = remap[size_t(v)];
    for (int32_t& v : n.outputs) v = remap[size_t(v)];
  }
  return changed;
}

// Drops the functions no entry reaches.
bool remove_unreachable_functions(ir::Module& m) {
  std::vector<bool> reached(m.functions.size(), false);
  std::vector<int32_t> work;
  for (const ir::Entry& e : m.entries) work.push_back(e.function);
  while (!work.empty()) {
    const int32_t f = work.back();
    work.pop_back();
    if (reached[size_t(f)]) continue;
    reached[size_t(f)] = true;
    for (const ir::Node& n : m.functions[size_t(f)].nodes)
      for (int32_t g : n.functions) work.push_back(g);
  }
  std::vector<int32_t> remap(m.functions.size(), -1);
  std::vector<ir::Function> functions;
  for (size_t f = 0; f < m.functions.size(); ++f) {
    if (!reached[f]) continue;
    remap[f] = int32_t(functions.size());
    functions.push_back(std::move(m.functions[f]));
  }
  const bool changed = functions.size() != m.functions.size();
  m.functions = std::move(functions);
  for (ir::Entry& e : m.entries) e.function = remap[size_t(e.function)];
  for (ir::Function& f : m.functions)
    for (ir::Node& n : f.nodes)
      for (int32_t& g : n.functions) g = remap[size_t(g)];
  return changed;
}

// Drops the module constants no value refers to.
bool remove_unused_constants(ir::Module& m) {
  std::vector<bool> used(m.constants.size(), false);
  for (const ir::Function& f : m.functions)
    for (const ir::Value& v : f.values)
      if (v.constant >= 0) used[size_t(v.constant)] = true;
  for (const ir::Variable& v : m.variables) used[size_t(v.constant)] = true;  // initial values
  std::vector<int32_t> remap(m.constants.size(), -1);
  std::vector<ir::Constant> constants;
  for (size_t k = 0; k < m.constants.size(); ++k) {
    if (!used[k]) continue;
    remap[k] = int32_t(constants.size());
    constants.push_back(std::move(m.constants[k]));
  }
  const bool changed = constants.size() != m.constants.size();
  m.constants = std::move(constants);
  for (ir::Function& f : m.functions)
    for (ir::Value& v : f.values)
      if (v.constant >= 0) v.constant = remap[size_t(v.constant)];
  for (ir::Variable& v : m.variables) v.constant = remap[size_t(v.constant)];
  return changed;
}

// An If or Call whose functions nothing else calls: the results its caller never
// reads leave the node and those functions (a forward If's values kept for an
// adjoint that reads them elsewhere), and the parameters no branch reads leave them
// and the node's inputs.
bool remove_unused_results_and_params(ir::Module& m) {
  std::vector<int> references(m.functions.size(), 0);
  for (const ir::Entry& e : m.entries) references[size_t(e.function)] += 2;
  for (const ir::Function& f : m.functions)
    for (const ir::Node& n : f.nodes)
      for (int32_t h : n.functions) ++references[size_t(h)];
  bool changed = false;
  for (ir::Function& f : m.functions) {
    std::vector<int32_t> uses = count_uses(f);
    for (ir::Node& n : f.nodes) {
      if (n.kind != ir::NodeKind::kIf && n.kind != ir::NodeKind::kCall) continue;
      bool sole = true;
      for (int32_t h : n.functions) sole = sole && references[size_t(h)] == 1 && &m.functions[size_t(h)] != &f;
      if (!sole) continue;
      std::vector<bool> keep_out(n.outputs.size());
      for (size_t o = 0; o < n.outputs.size(); ++o) keep_out[o] = uses[size_t(n.outputs[o])] > 0;
      const size_t first = n.kind == ir::NodeKind::kIf ? 1 : 0;
      std::vector<bool> keep_in(n.inputs.size() - first, false);
      for (int32_t h : n.functions) {
        ir::Function& callee = m.functions[size_t(h)];
        callee.results = kept_ids(callee.results, keep_out);
        const std::vector<int32_t> callee_uses = count_uses(callee);
        for (size_t j = 0; j < keep_in.size(); ++j) keep_in[j] = keep_in[j] || callee_uses[size_t(callee.params[j])] > 0;
      }
      std::vector<int32_t> outputs = kept_ids(n.outputs, keep_out), inputs = kept_ids(n.inputs, keep_in, first);
      for (int32_t h : n.functions) m.functions[size_t(h)].params = kept_ids(m.functions[size_t(h)].params, keep_in);
      changed = changed || outputs.size() != n.outputs.size() || inputs.size() != n.inputs.size();
      for (size_t j = first; j < n.inputs.size(); ++j)
        if (std::find(inputs.begin(), inputs.end(), n.inputs[j]) == inputs.end()) --uses[size_t(n.inputs[j])];
      n.outputs = std::move(outputs);
      n.inputs = std::move(inputs);
    }
  }
  return changed;
}

}  // namespace

bool eliminate_dead_code(ir::Module& m) {
  const std::vector<bool> effects = functions_with_effects(m);
  bool changed = remove_unused_results_and_params(m);
  for (ir::Function& f : m.functions) changed |= remove_dead_nodes(f, effects);
  changed |= remove_unreachable_functions(m);
  for (ir::Function& f : m.functions) changed |= compact_values(f);
  changed |= remove_unused_constants(m);
  return changed;
}

}  // namespace sg::compiler::passes
