// Statements: assignment, static control flow (only the taken branch runs;
// loops are unrolled), calls of module functions (evaluated in a new scope: at
// compile time when every argument is static, inlined otherwise).
#include <algorithm>

#include "staging/calls.h"
#include "staging/classes.h"
#include "staging/control_state.h"
#include "staging/staged_if.h"
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

bool Stager::scope_has(const std::string& name) const {
  return frame_ ? frame_->scope->lookup(name) != nullptr : globals_->lookup(name) != nullptr;
}

void Stager::del_target(const Expr& t) {
  switch (t.kind) {
    case ExprKind::kName: {
      if (Scope* declared = declared_scope(t.name, t.span, true)) {
        declared->erase(t.name);
        return;
      }
      if (!scope().find_local(t.name) || scope().find_local(t.name)->is<UndefinedV>())
        fail(t.span, "name '" + t.name + "' is not defined");
      scope().erase(t.name);
      return;
    }
    case ExprKind::kTuple:
    case ExprKind::kList:
      for (const ExprPtr& e : t.elts) del_target(*e);
      return;
    case ExprKind::kSubscript: {
      Value container = eval(*t.a);
      if (container.is<ListPtr>()) {
        auto& items = container.as<ListPtr>()->items;
        const int64_t n = int64_t(items.size());
        int64_t i = to_int(eval(*t.b), t.b->span, "a list index");
        if (i < 0) i += n;
        if (i < 0 || i >= n) fail(t.b->span, "list assignment index out of range");
        items.erase(items.begin() + i);
        return;
      }
      if (container.is<DictPtr>()) {
        Value key = eval(*t.b);
        auto& items = container.as<DictPtr>()->items;
        for (auto it = items.begin(); it != items.end(); ++it)
          if (static_equal(it->first, key).value_or(false)) {
            items.erase(it);
            return;
          }
        fail(t.b->span, "KeyError: " + py_repr(key));
      }
      fail(t.span, "'" + type_name(container) + "' object does not support item deletion");
    }
    case ExprKind::kAttribute: {
      Value obj = eval(*t.a);
      if (!obj.is<InstancePtr>() || obj.as<InstancePtr>()->cls->frozen)
        fail(t.span, "cannot delete attribute '" + t.name + "' of a " + type_name(obj) + " object");
      auto& items = obj.as<InstancePtr>()->attrs->items;
      for (auto it = items.begin(); it != items.end(); ++it)
        if (it->first.is<std::string>() && it->first.as<std::string>() == t.name) {
          items.erase(it);
          return;
        }
      fail(t.span, "'" + type_name(obj) + "' object has no attribute '" + t.name + "'");
    }
    default: fail(t.span, "cannot delete this expression");
  }
}

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
    // Method decorators (classes.cc binds the method by them).
    if (dec->kind == ExprKind::kName && !scope_has(dec->name)) {
      if (dec->name == "staticmethod") f->binding = FunctionV::Binding::kStatic;
      if (dec->name == "classmethod") f->binding = FunctionV::Binding::kClass;
      if (dec->name == "property") f->binding = FunctionV::Binding::kProperty;
      if (f->binding != FunctionV::Binding::kInstance) continue;
    }
    Value d = eval(*dec);
    if (d.is<SgMember>() && d.as<SgMember>().name == "function") {
      f->is_entry = true;
      continue;
    }
    fail(dec->span, "unsupported decorator: only @sg.function (and @staticmethod, @classmethod and @property on "
                    "methods) are allowed");
  }
  return f;
}

void Stager::assign(const Expr& target, const Value& v, SourceSpan span) {
  switch (target.kind) {
    case ExprKind::kName:
      name_value(*this, v, target.name);
      if (Scope* declared = declared_scope(target.name, span, true)) {
        if (declared == globals_.get() && (v.is<Staged>() || v.is<TensorListV>()))
          fail(span, "global variable '" + target.name + "' cannot hold a value known only at run time: a module "
                     "global is a compile-time constant; return the value instead");
        declared->set(target.name, v);
        return;
      }
      scope().set(target.name, v);
      if (scope().find_local(defined_flag(target.name))) scope().set(defined_flag(target.name), Value(true));
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
      // A list or dict made before a staged loop that its body changes in place would
      // change once at compile time (one that carries tensors is rebuilt in the body
      // and carried item by item instead, and is not met here).
      const auto made_before_loop = [&](const void* obj) -> const ControlState::LoopContainers* {
        for (const ControlState::LoopContainers& lc : control().loop_containers)
          if (lc.containers.count(obj)) return &lc;
        return nullptr;
      };
      if (container.is<ListPtr>()) {
        if (const ControlState::LoopContainers* lc = made_before_loop(container.as<ListPtr>().get()))
          fail(span, "`" + source_text(target.span) + "` assigns an item of a list made before " + lc->where +
                         " that holds no tensors or numbers; a staged loop may change only tensor and number items "
                         "of a list made before it");
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
            if (const ControlState::LoopContainers* lc = made_before_loop(container.as<DictPtr>().get()))
              fail(span, "`" + source_text(target.span) + "` assigns an item of a dict made before " + lc->where +
                             " that holds no tensors or numbers; a staged loop may change only tensor and number "
                             "items of a dict made before it");
            kv.second = v;
            if (target.a->kind == ExprKind::kName) {  // a key a staged loop added: assigned now
              const std::string flag = dict_key_flag(target.a->name, py_repr(key));
              if (scope().find_local(flag)) scope().set(flag, Value(true));
            }
            return;
          }
        const ControlState::LoopContainers* lc = made_before_loop(container.as<DictPtr>().get());
        if (lc && target.a->kind == ExprKind::kName && (v.is_tensor() || v.is_number()))
          throw DictKeyRetry{lc->token, target.a->name, key, tensor_type(to_tensor(v, std::nullopt, span)), span};
        if (lc)
          fail(span, "`" + source_text(target.span) + "` adds the key " + py_repr(key) + " to a dict made before " +
                         lc->where + ", whose body is staged once: a dict a staged loop carries keeps the keys it "
                         "had before the loop; give it that key, with a value of the type the loop assigns, "
                         "before the loop");
        container.as<DictPtr>()->items.emplace_back(key, v);
        return;
      }
      if (container.is_tensor()) {
        // Tensors are values: x[i] = v rebinds x (or the enclosing item) to the updated tensor.
        assign(*target.a, index_update(container, *target.b, v, span), span);
        return;
      }
      if (container.is<TensorListV>()) {
        // A list a staged loop appends to is a tensor [length, item dims...]: the
        // item is updated in it, and the name rebound to the updated list.
        const TensorListV& l = container.as<TensorListV>();
        const std::string name = target.a->kind == ExprKind::kName ? target.a->name : std::string("list");
        const Value items = Value(resolve_tensor_list(l, name, span));
        const Value updated = index_update(items, *target.b, v, span);
        if (!updated.is<Staged>()) fail(span, "item assignment to list '" + name + "': the list is not staged");
        assign(*target.a, Value(TensorListV{l.slot, updated.as<Staged>()}), span);
        return;
      }
      fail(span, "'" + type_name(container) + "' object does not support item assignment");
    }
    case ExprKind::kAttribute: {
      Value obj = eval(*target.a);
      records().set_attribute(obj, target.name, v, span);
      return;
    }
    default: fail(span, "cannot assign to this expression");
  }
}

// Python's binding: positional arguments fill the positional parameters, the
// rest go to *args; keywords name any parameter but *args, the rest go to **kwargs.
void Stager::bind_params(const FunctionV& f, const Args& args, Scope& scope) {
  const FunctionDef& def = *f.def;
  std::vector<bool> bound(def.params.size(), false);
  size_t positional = 0;
  while (positional < def.params.size() && def.params[positional].kind == ParamKind::kPositional) ++positional;
  const Param* var_pos = nullptr;
  const Param* var_kw = nullptr;
  for (const Param& p : def.params) {
    if (p.kind == ParamKind::kVarPositional) var_pos = &p;
    if (p.kind == ParamKind::kVarKeyword) var_kw = &p;
  }
  if (args.pos.size() > positional && !var_pos)
    fail(args.span, def.name + "() takes " + std::to_string(positional) + " positional arguments but " +
                        std::to_string(args.pos.size()) + " were given");
  for (size_t i = 0; i < args.pos.size() && i < positional; ++i) {
    scope.set(def.params[i].name, args.pos[i]);
    bound[i] = true;
  }
  if (var_pos) {
    std::vector<Value> rest;
    for (size_t i = positional; i < args.pos.size(); ++i) rest.push_back(args.pos[i]);
    scope.set(var_pos->name, make_tuple(std::move(rest)));
  }
  auto extra = std::make_shared<DictObj>();
  for (const auto& [name, value] : args.kw) {
    size_t i = 0;
    while (i < def.params.size() && (def.params[i].name != name || def.params[i].kind == ParamKind::kVarPositional ||
                                     def.params[i].kind == ParamKind::kVarKeyword))
      ++i;
    if (i == def.params.size()) {
      if (!var_kw) fail(args.span, def.name + "() got an unexpected keyword argument '" + name + "'");
      extra->items.emplace_back(Value(name), value);
      continue;
    }
    if (bound[i]) fail(args.span, def.name + "() got multiple values for argument '" + name + "'");
    scope.set(name, value);
    bound[i] = true;
  }
  if (var_kw) scope.set(var_kw->name, Value(extra));
  for (size_t i = 0; i < def.params.size(); ++i) {
    const ParamKind kind = def.params[i].kind;
    if (bound[i] || kind == ParamKind::kVarPositional || kind == ParamKind::kVarKeyword) continue;
    if (!f.defaults[i])
      fail(args.span, def.name + "() missing required " + (kind == ParamKind::kKeywordOnly ? "keyword-only " : "") +
                          "argument '" + def.params[i].name + "'");
    scope.set(def.params[i].name, *f.defaults[i]);
  }
}

Value Stager::call_function(const std::shared_ptr<FunctionV>& f, Args& args) {
  const FunctionDef& def = *f->def;
  const LibraryCall library_call(*this, def, args.span);
  auto scope_ptr = std::make_shared<Scope>(f->closure);
  bind_params(*f, args, *scope_ptr);
  // Recursive functions and @sg.function helpers with staged arguments are
  // graph functions called through Call nodes (staged_call.cc).
  // A method: super() finds its class and instance.
  if (ClassPtr owner = f->owner.lock(); owner && f->binding == FunctionV::Binding::kInstance && !def.params.empty()) {
    scope_ptr->set("$class", Value(owner));
    scope_ptr->set("$self", *scope_ptr->find_local(def.params[0].name));
  }
  if (calls().wants_graph_function(*f, *scope_ptr)) return calls().call_graph_function(f, *scope_ptr, args.span);
  if (call_depth_ >= max_compile_time_depth())
    fail(args.span, "recursion of '" + def.name + "' goes deeper than " + std::to_string(max_compile_time_depth()) +
                        " calls at compile time");
  count_step(args.span);
  CallFrame frame{scope_ptr, Value(), staged_depth()};
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
        return branches().exec_staged_if(s, test);
      }
      const bool taken = truth(test, s.test->span, "an if statement");
      explain(s.span, "if", std::string("compile time (the test is static: ") + (taken ? "True" : "False") + ")");
      return exec_block(taken ? s.body : s.orelse);
    }
    case StmtKind::kWhile: return loops().exec_while(s);
    case StmtKind::kFor: return loops().exec_for(s);
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
    case StmtKind::kClassDef:
      fail(s.span, "class '" + s.cls->name + "' is defined inside a function; define classes at module level");
    case StmtKind::kRaise: return records().exec_raise(s);
    case StmtKind::kTry: return records().exec_try(s);
    case StmtKind::kGlobal:
    case StmtKind::kNonlocal:
      for (const std::string& n : s.names) {
        if (s.kind == StmtKind::kNonlocal) {
          bool found = false;
          for (Scope* sp = scope().parent().get(); sp && sp != globals_.get(); sp = sp->parent().get())
            found = found || sp->find_local(n);
          if (!found) fail(s.span, "no binding for nonlocal '" + n + "' found in an enclosing function");
        }
        if (scope().find_local(n))
          fail(s.span, "name '" + n + "' is assigned to before its " +
                           (s.kind == StmtKind::kGlobal ? "global" : "nonlocal") + " declaration");
        scope().set(std::string(s.kind == StmtKind::kGlobal ? "$global " : "$nonlocal ") + n, Value(true));
      }
      return Flow::kNormal;
    case StmtKind::kDel:
      for (const ExprPtr& t : s.targets) del_target(*t);
      note_size_changes(control(), s.span);
      return Flow::kNormal;
  }
  fail(s.span, "unsupported statement");
}

}  // namespace sg::compiler::staging
