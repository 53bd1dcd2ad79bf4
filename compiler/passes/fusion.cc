// Fusion into the ops the backends run in one kernel:
//   add(matmul(x, w), b) [-> relu | tanh]  =>  fully_connected(x, w, b) {activation}
//   add(conv2d(x, w), b) [-> relu]         =>  conv2d_bias(x, w, b) {conv attrs, activation}
// with f32 operands, w of rank 2 (matmul), b of rank 1 with one entry per output
// channel (either add operand), and each intermediate used only by the next node.
// w and b need not be constants: the XNNPACK kernel takes constant weights where
// they are and otherwise runs the matmul it would have run unfused.
//
// Elementwise nodes left after these (add then relu on their own) are joined into
// elementwise_chain nodes by elementwise_fusion.cc, the last pass of -O2.
#include <optional>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

using ops::OpId;

struct Chain {
  size_t core = 0;                // the matmul or conv2d node
  size_t add = 0;
  std::optional<size_t> act;  // the relu or tanh node
  int64_t activation = ops::attr::kActNone;
  int32_t bias = -1;
};

bool is_f32(const ir::Function& f, int32_t v) { return f.values[size_t(v)].type.dtype == DType::kF32; }

// The bias operand of `add` when the other one is `core_out`, with the shape [channels].
std::optional<int32_t> bias_operand(const ir::Function& f, const ir::Node& add, int32_t core_out,
                                    const ir::Dim& channels) {
  for (int side = 0; side < 2; ++side) {
    if (add.inputs[size_t(side)] != core_out) continue;
    const int32_t b = add.inputs[size_t(1 - side)];
    if (b == core_out) continue;
    const ir::Type& t = f.values[size_t(b)].type;
    if (t.dtype == DType::kF32 && t.rank() == 1 && t.shape[0] == channels) return b;
  }
  return std::nullopt;
}

// Finds the chain that starts at core node i, if it can fuse.
std::optional<Chain> match(const ir::Function& f, size_t i, const std::vector<int32_t>& uses,
                           const std::vector<std::vector<size_t>>& users) {
  const ir::Node& core = f.nodes[i];
  if (core.kind != ir::NodeKind::kOp || (core.op != OpId::MatMul && core.op != OpId::Conv2D)) return std::nullopt;
  const int32_t out = core.outputs[0];
  const ir::Type& w = f.values[size_t(core.inputs[1])].type;
  if (!is_f32(f, core.inputs[0]) || !is_f32(f, core.inputs[1]) || !is_f32(f, out)) return std::nullopt;
  if (core.op == OpId::MatMul && (w.rank() != 2 || f.values[size_t(core.inputs[0])].type.rank() == 0))
    return std::nullopt;
  if (core.op == OpId::Conv2D && w.rank() != 4) return std::nullopt;
  if (uses[size_t(out)] != 1 || users[size_t(out)].size() != 1) return std::nullopt;
  Chain c;
  c.core = i;
  c.add = users[size_t(out)][0];
  const ir::Node& add = f.nodes[c.add];
  if (add.kind != ir::NodeKind::kOp || add.op != OpId::Add) return std::nullopt;
  const std::optional<int32_t> bias = bias_operand(f, add, out, w.shape.back());
  // The bias broadcasts over the rows, so the sum has the core's type.
  if (!bias || f.values[size_t(add.outputs[0])].type != f.values[size_t(out)].type) return std::nullopt;
  c.bias = *bias;
  const int32_t sum = add.outputs[0];
  if (uses[size_t(sum)] == 1 && users[size_t(sum)].size() == 1) {
    const ir::Node& act = f.nodes[users[size_t(sum)][0]];
    // tanh only into fully_connected: an RNN cell's tanh(x @ W + b).
    const bool relu = act.op == OpId::Relu, tanh = act.op == OpId::Tanh && core.op == OpId::MatMul;
    if (act.kind == ir::NodeKind::kOp && (relu || tanh) &&
        f.values[size_t(act.outputs[0])].type == f.values[size_t(sum)].type) {
      c.act = users[size_t(sum)][0];
      c.activation = relu ? ops::attr::kActRelu : ops::attr::kActTanh;
    }
  }
  return c;
}

bool fuse_function(ir::Function& f) {
  const std::vector<int32_t> uses = count_uses(f);
  std::vector<std::vector<size_t>> users(f.values.size());
  for (size_t i = 0; i < f.nodes.size(); ++i)
    for (int32_t v : f.nodes[i].inputs) users[size_t(v)].push_back(i);

  std::vector<bool> erase(f.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (erase[i]) continue;
    const std::optional<Chain> c = match(f, i, uses, users);
    if (!c || erase[c->add] || (c->act && erase[*c->act])) continue;
    const ir::Node& core = f.nodes[c->core];
    // The fused node takes the place of the chain's last node: x, w and b are all
    // defined before it (b may be defined after the core).
    const size_t last = c->act ? *c->act : c->add;
    ir::Node fused;
    fused.kind = ir::NodeKind::kOp;
    fused.inputs = {core.inputs[0], core.inputs[1], c->bias};
    fused.outputs = f.nodes[last].outputs;
    fused.span = core.span;
    const int64_t act = c->activation;
    if (core.op == OpId::MatMul) {
      fused.op = OpId::FullyConnected;
      fused.attrs.values = {ops::AttrValue::Int(act)};
    } else {
      fused.op = OpId::Conv2DBias;
      fused.attrs = core.attrs;
      fused.attrs.values.push_back(ops::AttrValue::Int(act));
    }
    erase[c->core] = erase[c->add] = true;
    f.nodes[last] = std::move(fused);
    erase[last] = false;
    changed = true;
  }
  erase_nodes(f, erase);
  return changed;
}

}  // namespace

bool fuse_operations(ir::Module& m) {
  bool changed = false;
  for (ir::Function& f : m.functions) changed |= fuse_function(f);
  return changed;
}

}  // namespace sg::compiler::passes
