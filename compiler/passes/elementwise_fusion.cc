// Elementwise chains: a tree of f32 elementwise nodes (attr::chain_step_op: add,
// sub, mul, div, maximum, minimum, tanh, gelu, relu, sqrt) whose inner results each feed
// only the next node becomes one elementwise_chain node, which a kernel runs in
// one pass with the intermediates in cache (kernels/xnnpack/elementwise_chain.cc):
//
//   %a = mul(%x, %s); %b = add(%a, %y); %c = tanh(%b)
//     =>  %c = elementwise_chain(%x, %s, %y) {steps=[mul,0,1, add,3,2, tanh,4,-1]}
//
// Every node of a chain has the chain's type, and each operand from outside it
// has that type or one element (a scalar), so the chain needs no broadcasting
// plan. Small tensors stay apart: their nodes run as fixed runs of a few
// nanoseconds and loops over them run on a register file (runtime/src), which a
// chain would stop.
//
// A member's result that is also used outside the chain (a result of the
// function, or an operand of a node after the chain's last one, where the chain
// node stands) becomes another output of the chain: Adam's update of a parameter
// and its two moments, which are variables too, is then one pass over p, g, m, v
// instead of three:
//
//   %m1 = b1 * %m + c1 * %g; %v1 = ...; %p1 = %p - %s * %m1 / (...)
//     =>  %m1, %v1, %p1 = elementwise_chain(...) {steps=[...], outputs=[2, 6, 12]}
#include <algorithm>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

using ops::OpId;

// Below this many elements (a static shape) a chain saves less than it costs.
constexpr int64_t kMinElements = 1024;

bool worth_a_chain(const ir::Type& t) {
  const std::optional<std::vector<int64_t>> shape = static_shape(t);
  if (!shape) return true;
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  return n >= kMinElements;
}

bool one_element(const ir::Type& t, const ir::Type& of) {
  if (t.rank() > of.rank()) return false;
  for (const ir::Dim& d : t.shape)
    if (!ops::dim_static(d) || d != ir::Dim(1)) return false;
  return true;
}

// Whether node i can be a step of a chain of type `type`.
bool step_of(const ir::Function& f, const ir::Node& n, const ir::Type& type) {
  if (n.kind != ir::NodeKind::kOp || !ops::attr::chain_step_op(n.op) || n.outputs.size() != 1) return false;
  if (f.values[size_t(n.outputs[0])].type != type || type.dtype != DType::kF32) return false;
  for (int32_t v : n.inputs) {
    const ir::Type& t = f.values[size_t(v)].type;
    if (t.dtype != DType::kF32 || (t != type && !one_element(t, type))) return false;
  }
  return true;
}

// Who reads each value: the nodes (in order, once per operand) and the function's results.
struct Uses {
  explicit Uses(const ir::Function& f) : nodes(f.values.size()), results(f.values.size(), 0) {
    for (size_t i = 0; i < f.nodes.size(); ++i)
      for (int32_t v : f.nodes[i].inputs) nodes[size_t(v)].push_back(int32_t(i));
    for (int32_t v : f.results) ++results[size_t(v)];
  }
  std::vector<std::vector<int32_t>> nodes;
  std::vector<int32_t> results;
};

class ChainBuilder {
 public:
  ChainBuilder(const ir::Function& f, const std::vector<int32_t>& producer, const Uses& uses, std::vector<bool>& taken)
      : f_(f), producer_(producer), uses_(uses), taken_(taken) {}

  // The chain whose last node is `root`, its members marked taken; empty when it
  // would be the root alone.
  std::vector<size_t> grow(size_t root) {
    members_.clear();
    root_ = root;
    type_ = &f_.values[size_t(f_.nodes[root].outputs[0])].type;
    count_ = 1;
    visit(root);
    if (members_.size() < 2) return {};
    for (size_t m : members_) taken_[m] = true;
    return members_;
  }

 private:
  // Whether `node` may take in the producer of its operand `v`: no other node
  // before the root reads v, so no other member can reach the producer again and
  // every node outside the chain that reads v comes after the chain node.
  bool joins(int32_t v, size_t node) const {
    for (int32_t u : uses_.nodes[size_t(v)])
      if (size_t(u) != node && size_t(u) < root_) return false;
    return true;
  }

  // Post-order: a member's operands come before it.
  void visit(size_t node) {
    for (int32_t v : f_.nodes[node].inputs) {
      const int32_t p = producer_[size_t(v)];
      if (p < 0 || taken_[size_t(p)] || !joins(v, node) || count_ >= ops::attr::kMaxChainSteps) continue;
      if (!step_of(f_, f_.nodes[size_t(p)], *type_)) continue;
      taken_[size_t(p)] = true;  // an operand the node reads twice joins once
      ++count_;
      visit(size_t(p));
    }
    members_.push_back(node);
  }

  const ir::Function& f_;
  const std::vector<int32_t>& producer_;
  const Uses& uses_;
  std::vector<bool>& taken_;
  const ir::Type* type_ = nullptr;
  size_t root_ = 0;
  size_t count_ = 0;
  std::vector<size_t> members_;
};

ir::Node chain_node(const ir::Function& f, const std::vector<size_t>& members, const Uses& uses) {
  std::vector<int32_t> member_outputs;
  for (size_t m : members) member_outputs.push_back(f.nodes[m].outputs[0]);
  const auto step_index = [&](int32_t v) {
    return std::find(member_outputs.begin(), member_outputs.end(), v) - member_outputs.begin();
  };
  ir::Node chain;
  chain.kind = ir::NodeKind::kOp;
  chain.op = OpId::ElementwiseChain;
  for (size_t m : members)
    for (int32_t v : f.nodes[m].inputs)
      if (size_t(step_index(v)) == members.size() &&
          std::find(chain.inputs.begin(), chain.inputs.end(), v) == chain.inputs.end())
        chain.inputs.push_back(v);
  const auto operand = [&](int32_t v) -> int64_t {
    const size_t j = size_t(step_index(v));
    if (j < members.size()) return int64_t(chain.inputs.size() + j);
    return std::find(chain.inputs.begin(), chain.inputs.end(), v) - chain.inputs.begin();
  };
  std::vector<int64_t> steps;
  for (size_t m : members) {
    const ir::Node& n = f.nodes[m];
    steps.push_back(int64_t(n.op));
    steps.push_back(operand(n.inputs[0]));
    steps.push_back(n.inputs.size() > 1 ? operand(n.inputs[1]) : -1);
  }
  chain.attrs.values = {ops::AttrValue::Ints(std::move(steps))};
  // The outputs: the root's result, and before it each member's that is read
  // outside the chain.
  std::vector<int64_t> output_steps;
  for (size_t j = 0; j + 1 < members.size(); ++j) {
    const int32_t v = member_outputs[j];
    const auto outside = [&](int32_t u) {
      return std::find(members.begin(), members.end(), size_t(u)) == members.end();
    };
    const std::vector<int32_t>& readers = uses.nodes[size_t(v)];
    if (uses.results[size_t(v)] == 0 && std::none_of(readers.begin(), readers.end(), outside)) continue;
    output_steps.push_back(int64_t(j));
    chain.outputs.push_back(v);
  }
  if (!output_steps.empty()) {
    output_steps.push_back(int64_t(members.size() - 1));
    chain.attrs.values.push_back(ops::AttrValue::Ints(std::move(output_steps)));
  }
  const ir::Node& root = f.nodes[members.back()];
  chain.outputs.push_back(root.outputs[0]);
  chain.span = root.span;
  return chain;
}

bool fuse_chains(ir::Function& f) {
  const Uses uses(f);
  std::vector<int32_t> producer(f.values.size(), -1);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].kind == ir::NodeKind::kOp)
      for (int32_t v : f.nodes[i].outputs) producer[size_t(v)] = int32_t(i);

  std::vector<bool> taken(f.nodes.size(), false), erase(f.nodes.size(), false);
  ChainBuilder builder(f, producer, uses, taken);
  bool changed = false;
  // Last nodes first: a node is a chain's root only when no later chain took it.
  for (size_t i = f.nodes.size(); i-- > 0;) {
    const ir::Node& n = f.nodes[i];
    if (taken[i] || n.kind != ir::NodeKind::kOp || n.outputs.size() != 1) continue;
    const ir::Type& type = f.values[size_t(n.outputs[0])].type;
    if (!worth_a_chain(type) || !step_of(f, n, type)) continue;
    const std::vector<size_t> members = builder.grow(i);
    if (members.empty()) continue;
    ir::Node chain = chain_node(f, members, uses);
    for (size_t m : members) erase[m] = true;
    erase[i] = false;
    f.nodes[i] = std::move(chain);
    changed = true;
  }
  erase_nodes(f, erase);
  return changed;
}

}  // namespace

bool fuse_elementwise_chains(ir::Module& m) {
  bool changed = false;
  for (ir::Function& f : m.functions) changed |= fuse_chains(f);
  return changed;
}

}  // namespace sg::compiler::passes
