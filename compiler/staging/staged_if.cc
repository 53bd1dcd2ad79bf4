// A staged `if` (SPEC §5): both branches are staged into graph functions of
// their own; the variables either branch assigns become the If node's outputs.
// Values of the enclosing function used inside a branch are captured as branch
// parameters, the same list for both branches (the If node passes them once).
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

// break/continue/return that would leave the staged branch (issue: lowered to
// flags later); nested defs and loops own their own.
const Stmt* find_jump(const std::vector<StmtPtr>& body, bool in_loop) {
  for (const StmtPtr& s : body) {
    switch (s->kind) {
      case StmtKind::kReturn: return s.get();
      case StmtKind::kBreak:
      case StmtKind::kContinue:
        if (!in_loop) return s.get();
        break;
      case StmtKind::kIf:
        if (const Stmt* j = find_jump(s->body, in_loop)) return j;
        if (const Stmt* j = find_jump(s->orelse, in_loop)) return j;
        break;
      case StmtKind::kWhile:
      case StmtKind::kFor:
        if (const Stmt* j = find_jump(s->body, true)) return j;
        break;
      default: break;
    }
  }
  return nullptr;
}

// The same binding: a variable the branch did not rebind.
bool same_binding(const Value& a, const Value& b) {
  if (a.data.index() != b.data.index()) return false;
  if (a.is<Staged>()) return a.as<Staged>().fn == b.as<Staged>().fn && a.as<Staged>().id == b.as<Staged>().id;
  if (a.is<StaticTensorPtr>()) return a.as<StaticTensorPtr>() == b.as<StaticTensorPtr>();
  if (a.is<ListPtr>()) return a.as<ListPtr>() == b.as<ListPtr>();
  if (a.is<DictPtr>()) return a.as<DictPtr>() == b.as<DictPtr>();
  if (a.is<std::shared_ptr<FunctionV>>()) return a.as<std::shared_ptr<FunctionV>>() == b.as<std::shared_ptr<FunctionV>>();
  return static_equal(a, b).value_or(false);
}

struct Branch {
  std::unique_ptr<FnBuilder> builder;
  std::map<std::string, Value> vars;
};

}  // namespace

Flow Stager::exec_staged_if(const Stmt& s, const Value& test) {
  const ir::Type test_type = tensor_type(test);
  if (test_type.rank() != 0)
    fail(s.test->span, "the test of a staged `if` must be a scalar, got " + module_->format_type(test_type) +
                           "; use sg.any or sg.all", provenance_notes({test}));
  if (const Stmt* j = find_jump(s.body, false) ? find_jump(s.body, false) : find_jump(s.orelse, false))
    fail(j->span, "staged control flow: break, continue and return inside a staged `if` are not supported yet");
  const Value cond = test_type.dtype == DType::kBool ? test : tensor_binary(ops::OpId::NotEqual, test, Value(int64_t(0)), s.test->span);
  const int32_t cond_id = materialize(cond, s.test->span);

  Scope& sc = scope();
  const std::map<std::string, Value> before = sc.vars();
  // Lists visible before the `if` must not change inside a branch: only one
  // branch runs, and a list is not a graph value.
  std::vector<std::pair<std::string, ListPtr>> lists;
  for (const Scope* sp = &sc; sp; sp = sp->parent().get())
    for (const auto& [name, v] : sp->vars())
      if (v.is<ListPtr>()) lists.emplace_back(name, v.as<ListPtr>());
  std::vector<std::vector<Value>> list_items;
  for (const auto& l : lists) list_items.push_back(l.second->items);
  auto check_lists = [&](const char* branch) {
    for (size_t i = 0; i < lists.size(); ++i) {
      std::vector<Value>& now = lists[i].second->items;
      bool same = now.size() == list_items[i].size();
      for (size_t k = 0; same && k < now.size(); ++k) same = same_binding(now[k], list_items[i][k]);
      if (!same) {
        now = list_items[i];
        fail(s.span, "list '" + lists[i].first + "' is changed in " + branch +
                         " of this staged `if`; appending to a list inside a staged `if` is not supported");
      }
    }
  };
  FnBuilder* parent = cur_;
  const std::string base = fn().name + ".if" + std::to_string(s.span.line);
  auto run_branch = [&](const std::vector<StmtPtr>& body, const std::string& suffix) {
    Branch br;
    module_->functions.push_back(ir::Function{});
    module_->functions.back().name = base + suffix;
    br.builder = std::make_unique<FnBuilder>();
    br.builder->fn = int32_t(module_->functions.size() - 1);
    br.builder->parent = parent;
    sc.vars() = before;
    cur_ = br.builder.get();
    try {
      exec_block(body);
    } catch (...) {
      cur_ = parent;
      sc.vars() = before;
      throw;
    }
    cur_ = parent;
    br.vars = sc.vars();
    return br;
  };
  Branch then_b = run_branch(s.body, ".then");
  check_lists("the then branch");
  Branch else_b = run_branch(s.orelse, ".else");
  check_lists("the else branch");
  sc.vars() = before;

  // Outputs: every variable either branch rebinds.
  std::vector<std::string> names;
  for (const auto* vars : {&then_b.vars, &else_b.vars})
    for (const auto& [name, v] : *vars) {
      auto b = before.find(name);
      if ((b == before.end() || !same_binding(b->second, v)) &&
          std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    }
  std::sort(names.begin(), names.end());
  std::vector<std::string> out_names;
  std::vector<ir::Type> out_types;
  for (const std::string& name : names) {
    auto t = then_b.vars.find(name), e = else_b.vars.find(name);
    if (t == then_b.vars.end() || e == else_b.vars.end()) {
      sc.set(name, Value(UndefinedV{name, t == then_b.vars.end() ? "the then branch" : "the else branch", s.span}));
      continue;
    }
    Value tv = t->second, ev = e->second;
    if (!tv.is_tensor() && !ev.is_tensor() && static_equal(tv, ev).value_or(false)) {
      sc.set(name, tv);
      continue;
    }
    auto tensorish = [](const Value& v) { return v.is_tensor() || v.is_number(); };
    if (!tensorish(tv) || !tensorish(ev))
      fail(s.span, "variable '" + name + "' is " + py_repr(tv) + " in the then branch and " + py_repr(ev) +
                       " in the else branch of this staged `if`; only tensors and numbers may differ");
    // A number beside a tensor takes the tensor's dtype.
    std::optional<DType> dt;
    if (tv.is_tensor()) dt = tensor_dtype(tv);
    if (ev.is_tensor()) {
      if (dt && *dt != tensor_dtype(ev))
        fail(s.span, "variable '" + name + "' is " + dtype_name(*dt) + " in the then branch and " +
                         dtype_name(tensor_dtype(ev)) + " in the else branch of this staged `if`; cast one with astype",
             provenance_notes({tv, ev}));
      dt = tensor_dtype(ev);
    }
    int32_t ids[2];
    ir::Type types[2];
    Branch* branches[2] = {&then_b, &else_b};
    Value vals[2] = {tv, ev};
    for (int k = 0; k < 2; ++k) {
      cur_ = branches[k]->builder.get();
      try {
        Value tensor = to_tensor(vals[k], dt, s.span);
        ids[k] = materialize(tensor, s.span);
      } catch (...) {
        cur_ = parent;
        throw;
      }
      types[k] = fn().values[size_t(ids[k])].type;
      fn().results.push_back(ids[k]);
      cur_ = parent;
    }
    if (types[0].rank() != types[1].rank())
      fail(s.span, "variable '" + name + "' is " + module_->format_type(types[0]) + " in the then branch and " +
                       module_->format_type(types[1]) + " in the else branch of this staged `if`: the ranks differ",
           provenance_notes({tv, ev}));
    ir::Type joined = types[0];
    for (size_t i = 0; i < joined.rank(); ++i)
      if (!(types[0].shape[i] == types[1].shape[i]))
        joined.shape[i] = ir::Dim::symbol(module_->symbols.fresh(name));
    out_names.push_back(name);
    out_types.push_back(std::move(joined));
  }

  // One capture list for both branches, in a fixed order.
  std::vector<Staged> outer;
  auto add_outer = [&](const Staged& v) {
    for (const Staged& o : outer)
      if (o.id == v.id) return;
    outer.push_back(v);
  };
  for (const auto& c : then_b.builder->captures) add_outer(c.second);
  for (const auto& c : else_b.builder->captures) add_outer(c.second);
  for (Branch* br : {&then_b, &else_b}) {
    ir::Function& f = module_->functions[size_t(br->builder->fn)];
    std::vector<int32_t> params;
    for (const Staged& o : outer) {
      int32_t param = -1;
      for (const auto& c : br->builder->captures)
        if (c.second.id == o.id) param = c.first;
      if (param < 0) {
        const ir::Value& ov = fn().values[size_t(o.id)];
        param = f.add_value(ov.type, ov.name, ov.span);
      }
      params.push_back(param);
    }
    f.params = std::move(params);
  }

  ir::Node node;
  node.kind = ir::NodeKind::kIf;
  node.inputs.push_back(cond_id);
  for (const Staged& o : outer) node.inputs.push_back(o.id);
  node.functions = {then_b.builder->fn, else_b.builder->fn};
  node.span = s.span;
  for (size_t i = 0; i < out_names.size(); ++i) {
    const int32_t id = fn().add_value(out_types[i], out_names[i], s.span);
    node.outputs.push_back(id);
    set_origin(cur_->fn, id, Origin{s.span, "the staged `if` produced"});
    sc.set(out_names[i], staged(id));
  }
  fn().nodes.push_back(std::move(node));
  return Flow::kNormal;
}

}  // namespace sg::compiler::staging
