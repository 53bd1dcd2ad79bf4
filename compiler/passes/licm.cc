// Loop-invariant code motion out of While bodies. A body parameter is invariant
// when the body returns it unchanged at its own position; a node of the body whose
// inputs are invariant parameters, constants or outputs of nodes already hoisted
// computes the same value on every iteration. Such a node moves before the While,
// its results enter the loop as extra carried values (the body returns them
// unchanged; cond ignores them), and the body reads them as parameters.
//
// A hoisted node also runs when the loop runs zero times, so only nodes that
// cannot fail are hoisted: pure ops with static shapes (their shape checks were
// all done at compile time) and no data-dependent errors (integer floordiv, mod
// and pow are left in place).
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

// Hoists what it can out of the While node at index `w` of function `fi`.
bool hoist_from(ir::Module& m, size_t fi, size_t w) {
  const ir::Node loop = m.functions[fi].nodes[w];
  ir::Function& body = m.functions[size_t(loop.functions[1])];
  const size_t carried = body.params.size();
  if (body.results.size() != carried || loop.inputs.size() != carried) return false;

  // outer[v]: the enclosing function's value for body value v, once known.
  std::vector<int32_t> outer(body.values.size(), -1);
  for (size_t i = 0; i < carried; ++i)
    if (body.results[i] == body.params[i]) outer[size_t(body.params[i])] = loop.inputs[i];
  std::vector<bool> hoist(body.nodes.size(), false);
  std::vector<size_t> order;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const ir::Node& n = body.nodes[i];
    if (!hoistable_op(body, n)) continue;
    bool invariant = true;
    for (int32_t v : n.inputs)
      invariant &= outer[size_t(v)] != -1 || body.values[size_t(v)].constant >= 0;
    if (!invariant) continue;
    hoist[i] = true;
    order.push_back(i);
    for (int32_t v : n.outputs) outer[size_t(v)] = -2;  // defined by a hoisted node; mapped below
  }
  if (order.empty()) return false;

  ir::Function& f = m.functions[fi];
  std::vector<ir::Node> moved;
  for (size_t i : order) {
    ir::Node n = body.nodes[i];
    for (int32_t& v : n.inputs) {
      if (outer[size_t(v)] < 0) {  // a constant of the body: the same constant here
        const ir::Value& bv = body.values[size_t(v)];
        const int32_t nv = f.add_value(bv.type, bv.name, bv.span);
        f.values[size_t(nv)].constant = bv.constant;
        outer[size_t(v)] = nv;
      }
      v = outer[size_t(v)];
    }
    for (int32_t& v : n.outputs) {
      const ir::Value& bv = body.values[size_t(v)];
      const int32_t nv = f.add_value(bv.type, bv.name, bv.span);
      outer[size_t(v)] = nv;
      v = nv;
    }
    moved.push_back(std::move(n));
  }

  // The hoisted results the rest of the body still reads become carried values.
  std::vector<int32_t> uses(body.values.size(), 0);
  for (size_t i = 0; i < body.nodes.size(); ++i)
    if (!hoist[i])
      for (int32_t v : body.nodes[i].inputs) ++uses[size_t(v)];
  for (int32_t v : body.results) ++uses[size_t(v)];
  ir::Node grown = loop;
  ir::Function& cond = m.functions[size_t(loop.functions[0])];
  for (size_t i : order)
    for (int32_t v : body.nodes[i].outputs) {
      if (uses[size_t(v)] == 0) continue;
      const ir::Value bv = body.values[size_t(v)];
      body.params.push_back(v);
      body.results.push_back(v);
      cond.params.push_back(cond.add_value(bv.type, bv.name, bv.span));
      grown.inputs.push_back(outer[size_t(v)]);
      grown.outputs.push_back(f.add_value(bv.type, bv.name, bv.span));
    }
  erase_nodes(body, hoist);
  f.nodes[w] = std::move(grown);
  f.nodes.insert(f.nodes.begin() + std::ptrdiff_t(w), std::make_move_iterator(moved.begin()),
                 std::make_move_iterator(moved.end()));
  return true;
}

}  // namespace

bool hoist_loop_invariants(ir::Module& m) {
  return rewrite_sole_user_whiles(m, [&](size_t fi, size_t w) -> size_t {
    const size_t before = m.functions[fi].nodes.size();
    return hoist_from(m, fi, w) ? m.functions[fi].nodes.size() - before : 0;
  });
}

}  // namespace sg::compiler::passes
