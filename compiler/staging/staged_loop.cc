// Staged loops (SPEC §5): a While node whose cond and body are graph functions
// over the loop-carried values. What is carried is decided before anything is
// emitted, by liveness over the AST (liveness.h): the variables the body
// assigns that are live into an iteration or after the loop. Every carried
// value is staged from the start (a static `i = 0` becomes an i64 tensor), so
// staging the body once is enough and nothing is undone.
//
// A While node passes only its carried values, so values of the enclosing
// function that the cond or body use (captures) are carried too, unchanged.
#include "staging/staged_loop.h"

#include "staging/sg_variables.h"
#include "staging/staged_if.h"
#include "staging/staged_loop_internal.h"

namespace sg::compiler::staging {
namespace loop_detail {

LoopStaging::LoopStaging(Stager& st_in, const StagedLoopSpec& spec_in, int64_t token_in,
                         const std::map<std::string, DType>& hints_in, const std::vector<AttrCarry>& attr_carries_in,
                         const RetryHints& retry_in)
    : st(st_in), spec(spec_in), token(token_in), hints(hints_in), attr_carries(attr_carries_in),
      retry(retry_in), s(spec.stmt),
      sc(st.scope()), cs(st.control()), m(st.module()),
      where(std::string(spec.what) + " loop at line " + std::to_string(s.span.line)),
      variables_before(st.variables().current()) {
  for (const Scope* sp = &sc; sp; sp = sp->parent().get())
    for (const auto& [name, v] : sp->vars())
      if (name[0] != '$') watch_instances(name, v, watches, 0);
}

Flow LoopStaging::run() {
  discover_carries();

  // ---- the body -------------------------------------------------------------------
  outer = st.builder();
  outer_vars = sc.vars();
  base = nested_function_name(st.fn().name, spec.what + std::to_string(s.span.line));
  body = new_builder(".body");
  cond = new_builder(".cond");
  struct Restore {
    Stager& st;
    FnBuilder* outer;
    ~Restore() { st.set_builder(outer); }
  } restore{st, outer};
  stage_body();
  carry_rebound_attrs();
  carry_assigned_variables();
  structure_results();
  body_results();
  stage_cond();

  // ---- the node -----------------------------------------------------------------------
  sc.vars() = outer_vars;
  st.set_builder(outer);
  std::vector<int32_t> inputs = node_inputs();
  bind_function_params();
  emit_node(std::move(inputs));
  if (spec.may_run_zero_times) note_zero_trip_dims();
  undefine_after();
  check_added_keys();
  explain_relaxed();
  return Flow::kNormal;
}

// Keys the body added to a dict (DictKeyRetry): the graph's dict has them after the
// loop, so a run in which no iteration assigned one stops here, as AutoGraph does.
void LoopStaging::check_added_keys() {
  for (const auto& [name, keys] : retry.dict_keys)
    for (const auto& [key, type] : keys) {
      const Value* flag = sc.lookup(dict_key_flag(name, py_repr(key)));
      if (!flag || flag_true(flag) || !flag->is<Staged>()) continue;
      st.assert_at_run_time(*flag, "KeyError: " + py_repr(key) + ": the staged " + where + " adds the key " +
                                       py_repr(key) + " to dict '" + name + "', and no iteration assigned it (a " +
                                       "graph's dict has one set of keys): the loop must assign it at least once",
                            s.span);
    }
}

// ---- what is carried, from the program text -----------------------------------
std::unique_ptr<FnBuilder> LoopStaging::new_builder(const std::string& suffix) {
  m.functions.push_back(ir::Function{});
  m.functions.back().name = base + suffix;
  auto b = std::make_unique<FnBuilder>();
  b->fn = int32_t(m.functions.size() - 1);
  b->parent = outer;
  return b;
}

void LoopStaging::bind_body_params() {
  for (Carry& c : carries) {
    switch (c.kind) {
      case CarryKind::kTensor:
        c.body_param = st.fn().add_value(*c.type, c.name[0] == '$' ? "" : c.name, s.span);
        sc.set(c.name, st.staged(c.body_param));
        if (c.weak) st.loops().mark_weak(st.staged(c.body_param), *c.weak);
        break;
      case CarryKind::kList:
        c.slot->body = body.get();
        if (c.slot->type) c.slot->param = st.fn().add_value(*c.slot->type, c.name, s.span);
        sc.set(c.name, Value(TensorListV{c.slot, std::nullopt}));
        break;
      case CarryKind::kFlag: sc.set(c.name, Value(false)); break;
      case CarryKind::kDefined:
        // A flag of a variable first assigned in this loop starts each iteration
        // false; one carried in from before the loop (a staged flag) or from the
        // start (created) is the loop's own value.
        if (!c.created && c.init.is<bool>()) {
          sc.set(c.name, Value(false));
        } else {
          c.body_param = st.fn().add_value(*c.type, "", s.span);
          sc.set(c.name, st.staged(c.body_param));
        }
        break;
      case CarryKind::kReturnValue: sc.set(c.name, Value(UndefinedV{c.name, "", s.span, ""})); break;
      case CarryKind::kTarget:
        sc.set(c.name, Value(UndefinedV{c.name, "", s.span,
                                        "variable '" + c.name + "' is read in the staged " + where +
                                            " before it is assigned there, and has no value before the loop: "
                                            "assign it before the loop"}));
        break;
      case CarryKind::kStatic: break;
    }
  }
}

void LoopStaging::bind_structures() {
  for (const Structure& x : structures) {
    size_t k = 0;
    std::vector<Value> leaves;
    for (const std::string& leaf : x.leaves) leaves.push_back(*sc.find_local(leaf));
    sc.set(x.name, rebuild(x.shape, leaves, k));
  }
}

void LoopStaging::stage_body() {
  st.set_builder(body.get());
  bind_body_params();
  bind_structures();
  for (const Structure& x : structures)
    if (const void* obj = container_object(*sc.find_local(x.name))) body_objects[x.name] = obj;
  attrs_from_scope();
  variables_from_scope();
  sc.set(kBreakFlag, Value(false));
  sc.set(kContinueFlag, Value(false));
  if (jumps.has_return) sc.set(kReturnFlag, Value(false));
  {
    Counter loops(cs.staged_loops);
    LoopContainersScope containers(cs, &s, "the staged " + where, outer_vars, token);
    for (const Structure& x : structures)
      if (const Value* d = sc.find_local(x.name); d && d->is<DictPtr>() && x.name[0] != '$')
        cs.loop_containers.back().carried_dicts[d->as<DictPtr>().get()] = x.name;
    st.records().open_raise_catcher();
    try {
      spec.prologue();
      st.exec_block(s.body, &s);
    } catch (RaiseSignal& r) {
      // The body raises on every iteration that reaches it: the run stops there.
      try {
        if (!r.staged) st.records().stage_raise(r);
      } catch (...) {
        st.records().close_raise_catcher();
        throw;
      }
    } catch (...) {
      st.records().close_raise_catcher();
      throw;
    }
    st.records().close_raise_catcher();
  }
}

// Attributes the body rebinds that this attempt does not carry: stage again carrying them.
void LoopStaging::carry_rebound_attrs() {
  attrs_to_scope();
  std::vector<AttrCarry> more = attr_carries;
  for (const AttrWatch& w : watches) {
    for (const auto& [key, item] : w.obj->attrs->items) {
      const std::string attr = py_str(key);
      bool carried = false;
      for (const AttrCarry& a : attr_carries) carried = carried || (a.obj == w.obj && a.attr == attr);
      if (carried) continue;
      const std::pair<Value, Value>* old = nullptr;
      for (const auto& kv : w.items)
        if (static_equal(kv.first, key).value_or(false)) old = &kv;
      if (!old) {
        if (item.is_tensor() || item.is_number())
          st.fail(s.span, "attribute '" + w.path + "." + attr + "' is first assigned inside the staged " + where +
                              "; it would be undefined when the loop runs zero times: assign it before the loop");
        continue;
      }
      if (same_value(old->second, item)) continue;
      more.push_back(AttrCarry{w.obj, attr, w.path + "." + attr});
    }
  }
  if (more.size() != attr_carries.size()) {
    attr_restore.restore();
    throw AttrRetry{token, std::move(more)};
  }
  attr_restore.restore();
}

// Results of the body: the carried values after one iteration. A tuple or dict
// returned from the loop is carried as one value per leaf and rebuilt after it.
void LoopStaging::structure_results() {
  for (const Structure& x : structures) {
    const Value* vp = sc.find_local(x.name);
    std::vector<std::pair<std::string, Value>> leaves;
    if (vp && vp->is<DictPtr>() && x.shape.is<DictPtr>() && !x.name.empty() && x.name[0] != '$')
      for (const auto& [key, item] : vp->as<DictPtr>()->items) {  // a key the body added: stage again with it
        bool known = false;
        for (const auto& kv : x.shape.as<DictPtr>()->items) known = known || static_equal(kv.first, key).value_or(false);
        if (!known && (item.is_tensor() || item.is_number()))
          throw DictKeyRetry{token, x.name, key, st.tensor_type(st.to_tensor(item, std::nullopt, s.span)), s.span};
      }
    if (!vp || !same_structure(x.shape, *vp) || !leaves_of(*vp, x.name, leaves)) {
      const std::string diff = vp ? structure_difference(x.shape, *vp, x.name) : "";
      st.fail(s.span, (diff.empty() ? shown_name(x.name) + " is " + py_repr(x.shape) + " before the loop and " +
                                          (vp ? py_repr(*vp) : std::string("undefined")) + " after an iteration"
                                    : diff) +
                          " of the staged " + where + "; a tuple, list or dict carried by a staged loop must keep "
                          "its length and keys, with tensors or numbers in it");
    }
    for (size_t k = 0; k < leaves.size(); ++k) sc.set(x.leaves[k], leaves[k].second);
    const auto start = body_objects.find(x.name);
    if (start != body_objects.end() && container_object(*vp) == start->second) in_place.insert(x.name);
  }
}

void LoopStaging::body_results() {
  for (Carry& c : carries) {
    const Value* vp = sc.find_local(c.name);
    Value v = vp ? *vp : Value(UndefinedV{c.name, "", s.span, ""});
    switch (c.kind) {
      case CarryKind::kStatic:
        if (!static_equal(v, c.init).value_or(false))
          st.fail(s.span, shown_name(c.name) + " is " + py_repr(c.init) + " before the staged " + where + " and " +
                              py_repr(v) + " after an iteration; only tensors and numbers may change in a staged loop");
        c.dropped = true;
        break;
      case CarryKind::kReturnValue:
        return_value_result(c, v);
        break;
      case CarryKind::kFlag:
        c.body_result = st.materialize(st.to_tensor(v, DType::kBool, s.span), s.span);
        break;
      case CarryKind::kDefined:
        // A variable first assigned in the loop must be assigned on every path
        // through an iteration: an iteration that skips it would keep an earlier
        // iteration's value, which this loop does not carry.
        if (c.init.is<bool>() && !c.created && !flag_true(&v)) {
          // Assigned on some paths only: carried from the start by another attempt.
          const std::string var = c.name.substr(9);
          for (const Carry& t : carries)
            if (t.name == var && t.kind == CarryKind::kTarget && t.type && !t.dropped)
              throw CreatedRetry{token, var, *t.type};
          st.fail(s.span, "variable '" + var + "' is first assigned inside the staged " + where +
                              " on some paths through an iteration only, and read after the loop: assign it "
                              "before the loop");
        }
        c.body_result = st.materialize(st.to_tensor(v, DType::kBool, s.span), s.span);
        break;
      case CarryKind::kTarget:
        if (!carried_targets.count(c.name) && (v.is<TuplePtr>() || v.is<DictPtr>())) {
          created_result(c, v);
          break;
        }
        if (!v.is_tensor() && !v.is_number())
          st.fail(s.span, (carried_targets.count(c.name) ? "the target '" : "variable '") + c.name +
                              "' of the staged " + where + " is " +
                              (v.is<UndefinedV>() ? std::string("unassigned") : "a " + type_name(v)) +
                              " at the end of an iteration and read after the loop, with no value before it; only "
                              "tensors and numbers can be created in a staged loop: assign it before the loop");
        c.body_value = st.to_tensor(v, std::nullopt, s.span);
        c.body_result = st.materialize(c.body_value, s.span);
        c.type = st.fn().values[size_t(c.body_result)].type;
        break;
      case CarryKind::kList:
        list_result(c, v);
        break;
      case CarryKind::kTensor:
        tensor_result(c, v);
        break;
    }
  }
  std::erase_if(carries, [](const Carry& c) { return c.dropped; });
  for (Carry& leaf : leaf_carries) carries.push_back(std::move(leaf));
}

// A tuple or dict first assigned inside the loop: one carry per leaf, each typed by
// the first iteration, rebuilt after the loop.
void LoopStaging::created_result(Carry& c, const Value& v) {
  std::vector<Value> leaves;
  return_leaves(st, v, leaves, s.span, where);
  Structure x{c.name, v, {}};
  for (size_t k = 0; k < leaves.size(); ++k) {
    Carry leaf{"$created." + c.name + "." + std::to_string(k), CarryKind::kTarget, Value()};
    leaf.body_value = st.to_tensor(leaves[k], std::nullopt, s.span);
    leaf.body_result = st.materialize(leaf.body_value, s.span);
    leaf.type = st.fn().values[size_t(leaf.body_result)].type;
    x.leaves.push_back(leaf.name);
    leaf_carries.push_back(std::move(leaf));
  }
  created.push_back(std::move(x));
  c.dropped = true;
}

// A tuple or dict returned from the loop: one carry per leaf, rebuilt after it.
void LoopStaging::return_value_result(Carry& c, Value v) {
  if (v.is<UndefinedV>()) {
    c.dropped = true;
    return;
  }
  if (v.is<TuplePtr>() || v.is<DictPtr>()) {
    std::vector<Value> leaves;
    return_leaves(st, v, leaves, s.span, where);
    for (size_t k = 0; k < leaves.size(); ++k) {
      Carry leaf{std::string(kReturnValue) + "." + std::to_string(k), CarryKind::kReturnValue, Value()};
      leaf.body_value = st.to_tensor(leaves[k], std::nullopt, s.span);
      leaf.body_result = st.materialize(leaf.body_value, s.span);
      leaf.type = st.fn().values[size_t(leaf.body_result)].type;
      leaf_carries.push_back(std::move(leaf));
    }
    return_shape = v;
    c.dropped = true;
    return;
  }
  if (!v.is_tensor() && !v.is_number())
    st.fail(s.span, "returning a " + type_name(v) + " from inside the staged " + where +
                        " is not supported; return tensors (alone, in a tuple or in a dict)");
  v = st.to_tensor(v, std::nullopt, s.span);
  c.body_result = st.materialize(v, s.span);
  c.type = st.fn().values[size_t(c.body_result)].type;
  c.body_value = v;
}

void LoopStaging::list_result(Carry& c, const Value& v) {
  if (!v.is<TensorListV>())
    st.fail(s.span, "list '" + c.name + "' is rebound to a " + type_name(v) + " inside the staged " + where +
                        "; a list in a staged loop may only be appended to");
  const TensorListV& l = v.as<TensorListV>();
  if (!l.tensor && l.slot == c.slot && c.slot->param < 0) {
    c.dropped = true;  // never appended to
    return;
  }
  c.body_result = st.local(st.resolve_tensor_list(l, c.name, s.span));
  c.type = c.slot->type;
}

// A carried tensor keeps its dtype, and its shape but for the relaxed dims.
void LoopStaging::tensor_result(Carry& c, Value v) {
  if (v.is<UndefinedV>() || !(v.is_tensor() || v.is_number()))
    st.fail(s.span, shown_name(c.name) + " is " + m.format_type(*c.type) + " before the staged " + where +
                        " and " + (v.is<UndefinedV>() ? std::string("undefined") : "a " + type_name(v)) +
                        " after an iteration");
  const DType want = c.type->dtype;
  if (c.weak && c.weak->loop == token && !c.weak->retyped) {
    const WeakOrigin* w = st.weak_origin(v);
    c.number_after = v.is_number() || (w && w->loop == token && w->name == c.name);
  }
  if (v.is_tensor() && st.tensor_dtype(v) != want) st.loops().retype_weak(st.staged(c.body_param), st.tensor_dtype(v));
  if (v.is_tensor() && st.tensor_dtype(v) != want)
    st.fail(s.span, shown_name(c.name) + " is " + dtype_name(want) + " before the staged " + where + " and " +
                        dtype_name(st.tensor_dtype(v)) + " after an iteration; its dtype must stay fixed: " +
                        "cast with astype", st.provenance_notes({v}));
  v = st.to_tensor(v, want, s.span);
  c.body_result = st.materialize(v, s.span);
  const ir::Type got = st.fn().values[size_t(c.body_result)].type;
  if (got.rank() != c.type->rank())
    st.fail(s.span, shown_name(c.name) + " changes rank in the staged " + where + ": " + m.format_type(*c.type) +
                        " before the loop, " + m.format_type(got) + " after an iteration; a value a staged loop "
                        "carries keeps its rank",
            st.provenance_notes({v}));
  // A dim that changes across iterations (a cache grown by concatenate) becomes a
  // fresh symbolic dim: the loop is staged again with it.
  std::set<size_t> changed;
  for (size_t i = 0; i < got.rank(); ++i)
    if (!c.relaxed.count(i) && !(got.shape[i] == c.type->shape[i])) changed.insert(i);
  if (!changed.empty()) throw RelaxRetry{token, c.name, std::move(changed)};
}

// --explain-staging: the variables first assigned in the loop, and the dims found
// changing across iterations, now symbolic.
void LoopStaging::explain_relaxed() {
  if (!st.explaining()) return;
  for (const Carry& c : carries)
    if (c.kind == CarryKind::kDefined && c.init.is<bool>() && (spec.may_run_zero_times || c.created))
      st.explain(s.span, spec.what, "variable '" + c.name.substr(9) + "' is first assigned inside the loop: carried " +
                                        (c.created ? "from the start" : "from its first iteration") +
                                        ", with a flag that a read after the loop checks");
  for (const Carry& c : carries)
    for (size_t axis : c.auto_relaxed)
      st.explain(s.span, spec.what, shown_name(c.name) + " changes dim " + std::to_string(axis) +
                                        " across iterations: carried with the symbolic dim " +
                                        m.format_dim(c.type->shape[axis]) + " (sg.relax(x, \"NAME\", " +
                                        std::to_string(axis) + ") before the loop names it)");
}

Value LoopStaging::unset_of_type(const ir::Type& type) { return unset_tensor_of_type(st, type, s.span); }

// ---- the condition ----------------------------------------------------------------
void LoopStaging::stage_cond() {
  sc.vars() = outer_vars;
  st.set_builder(cond.get());
  std::vector<std::string> flags;
  for (Carry& c : carries) {
    if (c.kind == CarryKind::kReturnValue) continue;
    c.cond_param = st.fn().add_value(*c.type, c.name[0] == '$' ? "" : c.name, s.span);
    if (c.kind == CarryKind::kList) sc.set(c.name, Value(TensorListV{nullptr, Staged{cond->fn, c.cond_param, {}}}));
    else sc.set(c.name, st.staged(c.cond_param));
    if (c.weak) st.loops().mark_weak(st.staged(c.cond_param), *c.weak);
    if (c.kind == CarryKind::kFlag) flags.push_back(c.name);
  }
  bind_structures();
  attrs_from_scope();
  variables_from_scope();
  Value go_on;
  if (flags.empty()) {
    go_on = eval_test();
  } else {
    // After a break or return the test must not run (it may fail): an If.
    Value any = *sc.find_local(flags[0]);
    for (size_t k = 1; k < flags.size(); ++k)
      any = st.tensor_binary(ops::OpId::LogicalOr, any, *sc.find_local(flags[k]), s.span);
    st.branches().staged_branches(s.span, st.apply(ops::OpId::LogicalNot, {}, {any}, s.span), "test",
                                  [&] { sc.set("$go_on", eval_test()); }, [&] { sc.set("$go_on", Value(false)); });
    go_on = *sc.find_local("$go_on");
  }
  const int32_t cond_result = st.materialize(st.to_tensor(go_on, DType::kBool, s.span), s.span);
  st.fn().results = {cond_result};
  attr_restore.restore();
  st.variables().current() = variables_before;
}

Value LoopStaging::eval_test() {
  Value t = spec.test();
  if (t.is_tensor() && st.tensor_rank(t) != 0)
    st.fail(s.test ? s.test->span : s.span, "the test of a staged `while` must be a scalar, got " +
                                                 m.format_type(st.tensor_type(t)) + "; use sg.any or sg.all",
            st.provenance_notes({t}));
  if (!t.is_tensor()) t = Value(st.truth(t, s.span, "a while loop"));
  else if (st.tensor_dtype(t) != DType::kBool) t = st.tensor_binary(ops::OpId::NotEqual, t, Value(int64_t(0)), s.span);
  return t;
}

// ---- the node -----------------------------------------------------------------------
std::vector<int32_t> LoopStaging::node_inputs() {
  std::vector<int32_t> inputs;
  for (Carry& c : carries) {
    Value init = c.init;
    if (c.kind == CarryKind::kReturnValue) init = st.unset_value_like(c.body_value, s.span);
    if (c.kind == CarryKind::kTarget) init = unset_of_type(*c.type);
    if (c.kind == CarryKind::kTensor && c.created) init = unset_of_type(*c.type);
    if (c.kind == CarryKind::kList && c.outer_list) {
      // The enclosing loop's list takes this loop's item type, under a dim of its own.
      TensorListSlot& outer_slot = *c.outer_list->slot;
      ir::Type t = *c.type;
      t.shape[0] = ir::Dim::symbol(m.symbols.fresh(c.name));
      outer_slot.type = t;
      init = Value(st.resolve_tensor_list(*c.outer_list, c.name, s.span));
    }
    if (c.kind == CarryKind::kList && !init.is_tensor())
      init = empty_list_tensor(st, *c.type, c.name, s.span, c.slot->open_dims);
    if (c.kind == CarryKind::kFlag || c.kind == CarryKind::kDefined) init = st.to_tensor(init, DType::kBool, s.span);
    inputs.push_back(st.materialize(init, s.span));
  }
  return inputs;
}

// One capture list for the body and the cond; the body passes the captures on.
void LoopStaging::bind_function_params() {
  auto add_captured = [&](const Staged& v) {
    for (const Staged& o : captured)
      if (o.id == v.id) return;
    captured.push_back(v);
  };
  for (const auto& c : body->captures) add_captured(c.second);
  for (const auto& c : cond->captures) add_captured(c.second);
  for (FnBuilder* b : {body.get(), cond.get()}) {
    ir::Function& f = m.functions[size_t(b->fn)];
    const bool is_body = b == body.get();
    std::vector<int32_t> params;
    for (Carry& c : carries) {
      int32_t& p = is_body ? (c.kind == CarryKind::kList ? c.slot->param : c.body_param) : c.cond_param;
      if (p < 0) p = f.add_value(*c.type, "", s.span);
      params.push_back(p);
    }
    if (is_body) {
      f.results.clear();
      for (const Carry& c : carries) f.results.push_back(c.body_result);
    }
    for (const Staged& o : captured) {
      int32_t param = -1;
      for (const auto& c : b->captures)
        if (c.second.id == o.id) param = c.first;
      if (param < 0) {
        const ir::Value& ov = st.fn().values[size_t(o.id)];
        param = f.add_value(ov.type, ov.name, ov.span);
      }
      params.push_back(param);
      if (is_body) f.results.push_back(param);
    }
    f.params = std::move(params);
  }
}

void LoopStaging::emit_node(std::vector<int32_t> inputs) {
  for (const Staged& o : captured) inputs.push_back(o.id);

  std::vector<Value> returned;
  ir::Node node;
  node.kind = ir::NodeKind::kWhile;
  node.inputs = std::move(inputs);
  node.functions = {cond->fn, body->fn};
  node.span = s.span;
  for (const Carry& c : carries) {
    const int32_t id = st.fn().add_value(*c.type, c.name[0] == '$' ? "" : c.name, s.span);
    node.outputs.push_back(id);
    st.set_origin(outer->fn, id, Origin{s.span, "the staged " + std::string(spec.what) + " loop produced"});
    const bool program_variable = c.name.rfind("$var.", 0) == 0;
    if (c.name[0] == '$' && c.kind == CarryKind::kTensor && !program_variable) continue;  // a hidden counter
    if (c.name == kBreakFlag) continue;                             // consumed by the loop
    // A loop that provably runs has assigned a variable first assigned on every path.
    if (c.kind == CarryKind::kDefined && !c.created && c.init.is<bool>() && !spec.may_run_zero_times) continue;
    if (c.kind == CarryKind::kReturnValue && c.name != kReturnValue) {  // a leaf of a returned tuple or dict
      returned.push_back(st.staged(id));
      continue;
    }
    // A relaxed dim stays relaxed through later loops.
    if (c.kind == CarryKind::kTensor)
      for (size_t axis : c.relaxed)
        if (std::optional<int32_t> sym = c.type->shape[axis].as_symbol()) cs.relaxed[{outer->fn, id}][int64_t(axis)] = *sym;
    if (c.kind == CarryKind::kList) sc.set(c.name, Value(TensorListV{nullptr, Staged{outer->fn, id, {}}}));
    else sc.set(c.name, st.staged(id));
    // After the loop its own numbers keep their dtype, taking another only at a use
    // beside a tensor; an enclosing loop's may still change.
    if (c.weak && c.weak->loop != token) st.loops().mark_weak(st.staged(id), *c.weak);
    else if (c.number_after) st.loops().mark_weak(st.staged(id), WeakOrigin::of_number(c.weak->number));
  }
  if (return_shape) {
    size_t k = 0;
    sc.set(kReturnValue, rebuild(*return_shape, returned, k));
  }
  bind_structures();
  for (const Structure& x : structures) {
    for (const std::string& leaf : x.leaves) sc.erase(leaf);
    if (!in_place.count(x.name)) continue;
    // Changed in place: the object from before the loop takes the new items.
    const Value now = *sc.find_local(x.name);
    if (x.shape.is<DictPtr>()) x.shape.as<DictPtr>()->items = now.as<DictPtr>()->items;
    else x.shape.as<ListPtr>()->items = now.as<ListPtr>()->items;
    sc.set(x.name, x.shape);
  }
  for (const Structure& x : created) {
    std::vector<Value> leaves;
    for (const std::string& leaf : x.leaves) {
      leaves.push_back(*sc.find_local(leaf));
      sc.erase(leaf);
    }
    size_t k = 0;
    sc.set(x.name, rebuild(x.shape, leaves, k));
  }
  attrs_from_scope();
  attr_restore.active = false;
  for (const AttrCarry& a : attr_carries) sc.erase(a.name);
  variables_from_scope();
  for (int32_t var : retry.variables) sc.erase(st.variables().carry_name(var));
  // `while True:` without a break leaves only by a return: the function has returned.
  if (jumps.has_return && !jumps.has_break && s.test && s.test->kind == ExprKind::kBool && s.test->bool_value)
    sc.set(kReturnFlag, Value(true));
  for (const Staged& o : captured)
    node.outputs.push_back(st.fn().add_value(st.fn().values[size_t(o.id)].type, "", s.span));
  st.fn().nodes.push_back(std::move(node));
}

// What the loop grows from empty is empty again when it runs zero times.
void LoopStaging::note_zero_trip_dims() {
  for (const Carry& c : carries) {
    std::vector<size_t> axes;
    if (c.kind == CarryKind::kList && !c.init.is_tensor()) axes.push_back(0);
    if (c.kind == CarryKind::kTensor)
      for (size_t axis : c.relaxed)
        if (st.tensor_type(c.init).shape[axis].as_static() == 0) axes.push_back(axis);
    for (size_t axis : axes)
      if (std::optional<int32_t> sym = c.type->shape[axis].as_symbol())
        cs.zero_trip_dims[*sym] = ControlState::ZeroTripDim{c.name, "the staged " + where, outer->fn};
  }
}

void LoopStaging::undefine_after() {
  for (const auto& [name, message] : undefined_after) sc.set(name, Value(UndefinedV{name, "", s.span, message}));
  for (const std::string& t : spec.targets)
    if (!carried_targets.count(t))
      sc.set(t, Value(UndefinedV{t, "", s.span,
                               "the target '" + t + "' of the staged " + where +
                                     " has no value before the loop and is read after it; it would be undefined "
                                     "when the loop runs zero times: assign it before the loop"}));
}

}  // namespace loop_detail

Value unset_tensor_of_type(Stager& st, const ir::Type& type, SourceSpan span) {
  ControlState& cs = st.control();
  ir::Module& m = st.module();
  const int32_t zero = st.materialize(Value(scalar_tensor(type.dtype, 0, 0)), span);
  std::vector<int64_t> shape;
  std::vector<Value> sizes;
  for (const ir::Dim& d : type.shape) {
    if (std::optional<int64_t> n = d.as_static()) {
      shape.push_back(*n);
      continue;
    }
    // A value with this dim in the current function or an enclosing one (captured).
    std::optional<Value> size;
    for (const FnBuilder* b = st.builder(); !size && b; b = b->parent) {
      const ir::Function& f = m.functions[size_t(b->fn)];
      for (size_t id = 0; !size && id < f.values.size(); ++id) {
        if (cs.unset_values.count({b->fn, int32_t(id)})) continue;
        const ir::Type& t = f.values[id].type;
        for (size_t axis = 0; !size && axis < t.rank(); ++axis)
          if (t.shape[axis] == d) size = st.shape_item(Value(Staged{b->fn, int32_t(id), {}}), int64_t(axis), span);
      }
    }
    shape.push_back(size ? ops::attr::kDynamicDim : 0);
    if (size) sizes.push_back(*size);
  }
  if (!sizes.empty()) {
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(shape)};
    std::vector<Value> inputs{st.staged(zero)};
    inputs.insert(inputs.end(), sizes.begin(), sizes.end());
    Value v = st.apply(ops::OpId::Full, std::move(attrs), std::move(inputs), span);
    cs.unset_values.insert({st.builder()->fn, v.as<Staged>().id});
    return v;
  }
  ir::Node node;
  node.op = ops::OpId::Full;
  node.attrs.values.push_back(ops::AttrValue::Ints(shape));
  node.inputs = {zero};
  node.span = span;
  ir::Type out{type.dtype, {}};
  for (int64_t d : shape) out.shape.push_back(ir::Dim(d));
  const int32_t id = st.fn().add_value(std::move(out), "", span);
  node.outputs = {id};
  st.fn().nodes.push_back(std::move(node));
  cs.unset_values.insert({st.builder()->fn, id});
  return st.staged(id);
}

using loop_detail::LoopStaging;
using loop_detail::AttrCarry;
using loop_detail::AttrRetry;

Flow run_staged_loop(Stager& st, const StagedLoopSpec& spec) {
  const int64_t token = st.loops().new_token();
  std::map<std::string, DType> hints;
  std::vector<AttrCarry> attrs;
  loop_detail::RetryHints retry;
  const Stager::Checkpoint start = st.checkpoint();
  for (;;) {
    try {
      return LoopStaging(st, spec, token, hints, attrs, retry).run();
    } catch (const WeakRetype& r) {
      // Each variable changes its dtype at most once (WeakOrigin::retyped).
      if (r.loop != token) throw;
      st.rollback(start);
      hints[r.name] = r.dtype;
    } catch (const loop_detail::RelaxRetry& r) {
      // Each attempt relaxes more axes of a carry; there are finitely many.
      if (r.loop != token) throw;
      st.rollback(start);
      retry.relax[r.name].insert(r.axes.begin(), r.axes.end());
    } catch (const loop_detail::CreatedRetry& r) {
      // Each attempt carries one more variable from the start; there are finitely many.
      if (r.loop != token) throw;
      st.rollback(start);
      retry.created[r.name] = r.type;
    } catch (AttrRetry& r) {
      // Each attempt carries more attributes; there are finitely many.
      if (r.loop != token) throw;
      st.rollback(start);
      attrs = std::move(r.carries);
    } catch (const DictKeyRetry& r) {
      // Each attempt adds one more key; the body names finitely many.
      if (r.loop != token) throw;
      st.rollback(start);
      std::vector<std::pair<Value, ir::Type>>& keys = retry.dict_keys[r.name];
      for (const auto& kv : keys)
        if (static_equal(kv.first, r.key).value_or(false))  // added, and still missing: reached another way
          st.fail(r.span, "this adds the key " + py_repr(r.key) + " to a dict that a staged loop carries, other "
                          "than through the variable '" + r.name + "' it had before the loop; give the dict that "
                          "key before the loop");
      keys.emplace_back(r.key, r.type);
    } catch (loop_detail::VariableRetry& r) {
      // Each attempt carries more program variables; there are finitely many.
      if (r.loop != token) throw;
      st.rollback(start);
      retry.variables = std::move(r.variables);
    }
  }
}

const WeakOrigin* Stager::weak_origin(const Value& v) const { return loops_->weak_origin(v); }

const WeakOrigin* Loops::weak_origin(const Value& v) const {
  if (!v.is<Staged>()) return nullptr;
  auto it = weak_.find({v.as<Staged>().fn, v.as<Staged>().id});
  return it == weak_.end() ? nullptr : &it->second;
}

void Loops::mark_weak(const Value& v, const WeakOrigin& origin) {
  if (v.is<Staged>()) weak_[{v.as<Staged>().fn, v.as<Staged>().id}] = origin;
}

void Loops::mark_weak_int(const Value& v) {
  if (v.is<Staged>() && is_int(s_.tensor_dtype(v)) && s_.tensor_rank(v) == 0 && !weak_origin(v))
    mark_weak(v, WeakOrigin::of_number(Value(int64_t(0))));
}

void Loops::forget_functions(size_t functions) {
  weak_.erase(weak_.lower_bound(std::pair<int32_t, int32_t>{int32_t(functions), INT32_MIN}), weak_.end());
}

void Loops::forget_values(int32_t fn, size_t values) {
  std::erase_if(weak_, [&](const auto& kv) { return kv.first.first == fn && size_t(kv.first.second) >= values; });
}

bool Stager::number_fits(const Value& number, DType dtype) {
  if (number.is<double>()) return is_float(dtype);
  if (number.is<int64_t>() && dtype == DType::kBool) return false;
  if (number.is<int64_t>() && dtype == DType::kI32)
    return number.as<int64_t>() >= INT32_MIN && number.as<int64_t>() <= INT32_MAX;
  return true;
}

bool at_least_one(const ir::Dim& trips) {
  if (trips.constant() < 1) return false;
  for (const ir::Dim::Term& t : trips.terms())
    if (t.coef < 0) return false;
  return true;
}

void warn_zero_trip_read(Stager& st, const ir::Dim& dim, const std::string& what, const std::string& consequence,
                         SourceSpan span) {
  const std::optional<int32_t> sym = dim.as_symbol();
  if (!sym) return;
  ControlState& cs = st.control();
  auto it = cs.zero_trip_dims.find(*sym);
  if (it == cs.zero_trip_dims.end() || !st.builder() || st.builder()->fn != it->second.fn) return;
  // One warning per loop-grown value: its first read; the fix is the same for all.
  if (!cs.zero_trip_warned.insert(*sym).second) return;
  const ControlState::ZeroTripDim& z = it->second;
  st.warn(span, what + " '" + z.name + "', which " + z.where + " grows from empty: it is empty when that loop runs "
                    "zero times, and " + consequence,
          {Note{{}, "start '" + z.name + "' with an item before the loop, or read it only where the loop ran "
                    "(under a staged test of its length)"}});
}

}  // namespace sg::compiler::staging
