// break/continue/return under staged tests, lowered to flags (SPEC §5,
// DESIGN.md #2): a jump statement sets its flag variable in the scope and ends
// the block statically; a staged construct joins the flags like any variable,
// and once a flag is staged the rest of the block runs under an If on it. The
// IR stays structured: If and While only.
#include <deque>

#include "staging/control_state.h"
#include "staging/liveness.h"
#include "staging/staged_if.h"

namespace sg::compiler::staging {
namespace {

const char* const kFlags[] = {kBreakFlag, kContinueFlag, kReturnFlag};
const Flow kFlagFlows[] = {Flow::kBreak, Flow::kContinue, Flow::kReturn};

struct BlockGuard {
  std::vector<BlockPos>& blocks;
  size_t size;
  ~BlockGuard() { blocks.resize(size); }
};

}  // namespace

ControlState& Stager::control() {
  if (!control_) control_ = std::make_shared<ControlState>();
  return *control_;
}

Flow Stager::exec_block(const std::vector<StmtPtr>& body, const Stmt* loop) {
  return exec_block_from(body, 0, loop, false);
}

Flow Stager::exec_block_from(const std::vector<StmtPtr>& body, size_t from, const Stmt* loop, bool continues) {
  std::vector<BlockPos>& blocks = control().blocks;
  BlockGuard guard{blocks, blocks.size()};
  blocks.push_back(BlockPos{&body, from, frame_, loop, continues});
  const size_t me = blocks.size() - 1;
  for (size_t i = from; i < body.size(); ++i) {
    blocks[me].index = i;
    const Flow f = exec(*body[i]);
    if (f != Flow::kNormal) return f;
    if (!frame_) continue;
    std::vector<std::string> staged_flags;
    for (int k = 0; k < 3; ++k) {
      const Value* v = scope().find_local(kFlags[k]);
      if (flag_true(v)) return kFlagFlows[k];
      if (flag_staged(v)) staged_flags.push_back(kFlags[k]);
    }
    if (staged_flags.empty() || i + 1 == body.size()) continue;
    // Some path jumped: the rest of the block runs only where none did.
    const SourceSpan span = body[i + 1]->span;
    Value any = *scope().find_local(staged_flags[0]);
    for (size_t k = 1; k < staged_flags.size(); ++k)
      any = tensor_binary(ops::OpId::LogicalOr, any, *scope().find_local(staged_flags[k]), span);
    const Value go_on = apply(ops::OpId::LogicalNot, {}, {any}, span);
    branches().staged_branches(
        span, go_on, "rest",
        [&] {
          for (const std::string& flag : staged_flags) scope().set(flag, Value(false));
          exec_block_from(body, i + 1, loop, true);
        },
        [&] {
          if (staged_flags.size() == 1) scope().set(staged_flags[0], Value(true));
        });
    for (int k = 0; k < 3; ++k)
      if (flag_true(scope().find_local(kFlags[k]))) return kFlagFlows[k];
    return Flow::kNormal;
  }
  return Flow::kNormal;
}

Flow Stager::exec_jump(const Stmt& s) {
  if (s.kind != StmtKind::kReturn) {
    bool in_loop = false;
    for (const BlockPos& b : control().blocks) in_loop = in_loop || (b.frame == frame_ && b.loop);
    if (!in_loop) fail(s.span, std::string("'") + (s.kind == StmtKind::kBreak ? "break" : "continue") + "' outside a loop");
  }
  switch (s.kind) {
    case StmtKind::kBreak:
      scope().set(kBreakFlag, Value(true));
      return Flow::kBreak;
    case StmtKind::kContinue:
      scope().set(kContinueFlag, Value(true));
      return Flow::kContinue;
    default: {
      Value v = s.value ? eval(*s.value) : Value();
      frame_->return_value = v;
      scope().set(kReturnValue, v);
      scope().set(kReturnFlag, Value(true));
      return Flow::kReturn;
    }
  }
}

Value Stager::frame_result(const FunctionDef& def, SourceSpan span) {
  const Value* ret = scope().find_local(kReturnFlag);
  if (!ret) return frame_->return_value;
  if (flag_true(ret)) {
    const Value* v = scope().find_local(kReturnValue);
    return v ? *v : Value();
  }
  if (flag_staged(ret))
    fail(span, "function '" + def.name + "' returns inside a staged `if` or loop on some paths but can reach its end "
               "without a return on others; add a return at the end");
  return Value();
}

Value Stager::unset_value_like(const Value& model, SourceSpan span) {
  if (model.is<bool>()) return Value(false);
  if (model.is<int64_t>()) return Value(int64_t(0));
  if (model.is<double>()) return Value(0.0);
  if (model.is<TuplePtr>()) {
    std::vector<Value> items;
    for (const Value& v : *model.as<TuplePtr>()) items.push_back(unset_value_like(v, span));
    return make_tuple(std::move(items));
  }
  if (model.is<DictPtr>()) {
    auto d = std::make_shared<DictObj>();
    for (const auto& [k, v] : model.as<DictPtr>()->items) d->items.emplace_back(k, unset_value_like(v, span));
    return Value(DictPtr(d));
  }
  if (model.is<NoneV>()) return model;
  if (!model.is_tensor())
    fail(span, "a return value of type " + type_name(model) + " inside a staged `if` or loop is not supported");
  const ir::Type type = tensor_type(model);
  std::vector<int64_t> shape;
  for (const ir::Dim& d : type.shape) shape.push_back(d.as_static().value_or(0));
  // A node of its own, not a cached splat: its unset mark must not reach
  // an equal constant the program uses.
  const int32_t zero = materialize(Value(scalar_tensor(type.dtype, 0, 0)), span);
  ir::Node node;
  node.op = ops::OpId::Full;
  node.attrs.values.push_back(ops::AttrValue::Ints(shape));
  node.inputs = {zero};
  node.span = span;
  ir::Type out{type.dtype, {}};
  for (int64_t d : shape) out.shape.push_back(ir::Dim(d));
  const int32_t id = fn().add_value(std::move(out), "", span);
  node.outputs = {id};
  fn().nodes.push_back(std::move(node));
  control().unset_values.insert({cur_->fn, id});
  return staged(id);
}

// Names live after the statement running in the innermost block of the current
// Python function, from the statement stack (liveness.h).
NameSet live_after_current(const ControlState& cs, const CallFrame* frame) {
  std::vector<const BlockPos*> entries;
  for (size_t i = cs.blocks.size(); i > 0; --i) {
    if (cs.blocks[i - 1].frame != frame) break;
    entries.insert(entries.begin(), &cs.blocks[i - 1]);
  }
  std::deque<NameSet> store;
  LoopExits exits;
  NameSet out;
  for (size_t k = 0; k < entries.size(); ++k) {
    const BlockPos& e = *entries[k];
    NameSet end_live;
    if (k > 0 && e.loop) {
      store.push_back(out);
      const NameSet& after = store.back();
      store.push_back(loop_entry_live(*e.loop, after));
      end_live = store.back();
      exits = LoopExits{&after, &store.back()};
    } else if (k > 0) {
      end_live = out;
    }
    if (k + 1 < entries.size() && entries[k + 1]->continues) out = end_live;
    else out = live_before(*e.body, e.index + 1, end_live, exits);
  }
  return out;
}

}  // namespace sg::compiler::staging
