// Statements: assignment, static control flow (only the taken branch runs;
// loops are unrolled), calls of module functions (evaluated in a new scope: at
// compile time when every argument is static, inlined otherwise).
#include <algorithm>

#include "staging/control_state.h"
#include "staging/staged_loop.h"

namespace sg::compiler::staging {
namespace {

// A staged value bound to a variable takes the variable's name in the IR, for
// messages and dumps, unless it already has one (a parameter keeps its own).
void name_value(Stager& s, const Value& v, const std::string& name) {
  if (!v.is<Staged>()) return;
  const Staged& st = v.as<Staged>();
  ir::Value& iv = s.module().functions[size_t(st.fn)].values[size_t(st.id)];
  if (iv.name.empty() && iv.constant < 0) iv.name = name;
}

}  // namespace

std::shared_ptr<FunctionV> Stager::make_function(const FunctionDef& def, std::shared_ptr<Scope> closure) {
  auto f = std::make_shared<FunctionV>();
  f->def = &def;
  if (closure_scopes_.size() >= compact_closures_at_) {  // drop the scopes already freed
    std::erase_if(closure_scopes_, [](const std::weak_ptr<Scope>& w) { return w.expired(); });
    compact_closures_at_ = std::max<size_t>(64, closure_scopes_.size() * 2);
  }
  closure_scopes_.push_back(closure);
  f->closure = std::move(closure);
  for (const Param& p : def.params) {
    if (!p.default_value) {
      f->defaults.push_back(nullptr);
      continue;
    }
    Value d = eval(*p.default_value);
    if (d.is<Staged>()) fail(p.default_value->span, "a default value must be static");
    f->defaults.push_back(std::make_shared<Value>(std::move(d)));
  }
  for (const ExprPtr& dec : def.decorators) {
    Value d = eval(*dec);
    if (d.is<SgMember>() && d.as<SgMember>().name == "function") {
      f->is_entry = true;
      continue;
    }
    fail(dec->span, "unsupported decorator: only @sg.function is allowed");
  }
  return f;
}

void Stager::assign(const Expr& target, const Value& v, SourceSpan span) {
  switch (target.kind) {
    case ExprKind::kName:
      name_value(*this, v, target.name);
      scope().set(target.name, v);
      return;
    case ExprKind::kTuple:
    case ExprKind::kList: {
      std::vector<Value> items;
      if (v.is_tensor()) {
        const ir::Type t = tensor_type(v);
        if (t.shape.empty()) fail(span, "cannot unpack a 0-d tensor");
        std::optional<int64_t> n = t.shape[0].as_static();
        if (!n) fail(span, "cannot unpack a tensor whose first dim " + module_->format_dim(t.shape[0]) + " is only known at run time");
        if (size_t(*n) != target.elts.size())
          fail(span, "cannot unpack a tensor of first dim " + std::to_string(*n) + " into " +
                         std::to_string(target.elts.size()) + " names");
      }
      items = to_list(v, span);
      if (items.size() != target.elts.size())
        fail(span, "cannot unpack " + std::to_string(items.size()) + " values into " +
                       std::to_string(target.elts.size()) + " names");
      for (size_t i = 0; i < items.size(); ++i) assign(*target.elts[i], items[i], target.elts[i]->span);
      return;
    }
    case ExprKind::kSubscript: {
      Value container = eval(*target.a);
      if (container.is<ListPtr>()) {
        Value idx = eval(*target.b);
        auto& items = container.as<ListPtr>()->items;
        const int64_t n = int64_t(items.size());
        int64_t i = to_int(idx, target.b->span, "a list index");
        if (i < 0) i += n;
        if (i < 0 || i >= n) fail(target.b->span, "list assignment index out of range");
        items[size_t(i)] = v;
        return;
      }
      if (container.is<DictPtr>()) {
        Value key = eval(*target.b);
        if (key.is_tensor()) fail(target.b->span, "dict keys must be static");
        for (auto& kv : container.as<DictPtr>()->items)
          if (static_equal(kv.first, key).value_or(false)) {
            kv.second = v;
            return;
          }
        container.as<DictPtr>()->items.emplace_back(key, v);
        return;
      }
      if (container.is_tensor()) {
        // Tensors are values: x[i] = v rebinds x (or the enclosing item) to the updated tensor.
        assign(*target.a, index_update(container, *target.b, v, span), span);
        return;
      }
      fail(span, "'" + type_name(container) + "' object does not support item assignment");
    }
    case ExprKind::kAttribute: fail(span, "assignment to an attribute is not supported");
    default: fail(span, "cannot assign to this expression");
  }
}

Value Stager::call_function(const std::shared_ptr<FunctionV>& f, Args& args) {
  const FunctionDef& def = *f->def;
  auto scope_ptr = std::make_shared<Scope>(f->closure);
  std::vector<bool> bound(def.params.size(), false);
  if (args.pos.size() > def.params.size())
    fail(args.span, def.name + "() takes " + std::to_string(def.params.size()) + " positional arguments but " +
                        std::to_string(args.pos.size()) + " were given");
  for (size_t i = 0; i < args.pos.size(); ++i) {
    scope_ptr->set(def.params[i].name, args.pos[i]);
    bound[i] = true;
  }
  for (auto& [name, value] : args.kw) {
    size_t i = 0;
    while (i < def.params.size() && def.params[i].name != name) ++i;
    if (i == def.params.size()) fail(args.span, def.name + "() got an unexpected keyword argument '" + name + "'");
    if (bound[i]) fail(args.span, def.name + "() got multiple values for argument '" + name + "'");
    scope_ptr->set(name, value);
    bound[i] = true;
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    if (bound[i]) continue;
    if (!f->defaults[i]) fail(args.span, def.name + "() missing required argument '" + def.params[i].name + "'");
    scope_ptr->set(def.params[i].name, *f->defaults[i]);
  }
  // Recursive functions and @sg.function helpers with staged arguments are
  // graph functions called through Call nodes (staged_call.cc).
  if (wants_graph_function(*f, *scope_ptr)) return call_graph_function(f, *scope_ptr, args.span);
  if (call_depth_ >= max_compile_time_depth())
    fail(args.span, "recursion of '" + def.name + "' goes deeper than " + std::to_string(max_compile_time_depth()) +
                        " calls at compile time");
  count_step(args.span);
  CallFrame frame{scope_ptr, Value()};
  CallFrame* outer = frame_;
  frame_ = &frame;
  ++call_depth_;
  Value result;
  try {
    exec_block(def.body);
    result = frame_result(def, args.span);
  } catch (...) {
    frame_ = outer;
    --call_depth_;
    throw;
  }
  frame_ = outer;
  --call_depth_;
  return result;
}

Flow Stager::exec(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kExpr: {
      // name.append(v) on a tensor list rebinds the name (value semantics).
      const Expr& e = *s.value;
      if (e.kind == ExprKind::kCall && e.a->kind == ExprKind::kAttribute && e.a->name == "append" &&
          e.a->a->kind == ExprKind::kName && e.elts.size() == 1 && e.keywords.empty()) {
        Value list = lookup_name(e.a->a->name, e.a->a->span);
        if (list.is<TensorListV>()) {
          Value item = eval(*e.elts[0]);
          scope().set(e.a->a->name, tensor_list_append(*this, list.as<TensorListV>(), e.a->a->name, item, e.span));
          return Flow::kNormal;
        }
      }
      eval(e);
      note_size_changes(control(), s.span);
      return Flow::kNormal;
    }
    case StmtKind::kAssign: {
      Value v = eval(*s.value);
      for (const ExprPtr& t : s.targets) assign(*t, v, t->span);
      note_size_changes(control(), s.span);
      return Flow::kNormal;
    }
    case StmtKind::kAnnAssign:
      if (s.value) assign(*s.target, eval(*s.value), s.target->span);
      note_size_changes(control(), s.span);
      return Flow::kNormal;
    case StmtKind::kAugAssign: {
      Value rhs = eval(*s.value);
      Value old = eval(*s.target);
      if (old.is<ListPtr>() && s.aug_op == BinOp::kAdd) {  // list += extends in place
        for (const Value& v : to_list(rhs, s.value->span)) old.as<ListPtr>()->items.push_back(v);
        note_size_changes(control(), s.span);
        return Flow::kNormal;
      }
      assign(*s.target, binary(s.aug_op, old, rhs, operator_span(s.span, s.op_span)), s.target->span);
      return Flow::kNormal;
    }
    case StmtKind::kIf: {
      Value test = eval(*s.test);
      if (test.is<Staged>()) {
        if (explaining())
          explain(s.span, "if", "staged (test `" + source_text(s.test->span) + "` " + staged_reason(*this, test) + ")");
        return exec_staged_if(s, test);
      }
      const bool taken = truth(test, s.test->span, "an if statement");
      explain(s.span, "if", std::string("compile time (the test is static: ") + (taken ? "True" : "False") + ")");
      return exec_block(taken ? s.body : s.orelse);
    }
    case StmtKind::kWhile: return exec_while(s);
    case StmtKind::kFor: return exec_for(s);
    case StmtKind::kBreak:
    case StmtKind::kContinue:
    case StmtKind::kReturn: return exec_jump(s);
    case StmtKind::kPass: return Flow::kNormal;
    case StmtKind::kAssert: {
      Value test = eval(*s.test);
      if (test.is<Staged>()) {
        stage_assert(s, test);
        return Flow::kNormal;
      }
      if (!truth(test, s.test->span, "an assert")) {
        std::string msg = "assertion failed";
        if (s.msg) msg += ": " + py_str(eval(*s.msg));
        fail(s.span, msg);
      }
      return Flow::kNormal;
    }
    case StmtKind::kFunctionDef: {
      auto f = make_function(*s.func, frame_->scope);
      scope().set(s.func->name, Value(f));
      return Flow::kNormal;
    }
    case StmtKind::kImport:
    case StmtKind::kImportFrom:
      fail(s.span, "import is only allowed at module level");
  }
  fail(s.span, "unsupported statement");
}

}  // namespace sg::compiler::staging
