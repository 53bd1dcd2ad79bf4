// A staged `if` (SPEC §5): both branches are staged into graph functions of
// their own; the variables either branch rebinds become the If node's outputs.
// Values of the enclosing function used inside a branch are captured as branch
// parameters, the same list for both branches (the If node passes them once).
// Flag variables of break/continue/return (control_state.h) join like any
// other variable; a return value missing on one side gets an unset value there,
// never read, since the return flag says which side holds the value.
// Lists and dicts that exist before the `if` may change inside a branch: each
// branch's items are recorded and undone, and the items join like variables
// (staged_if_containers.cc).
// So do the program's variables (sg.variables) a branch assigns, under hidden names:
// a branch that does not assign one keeps its value from before the `if`.
#include <utility>

#include "staging/staged_if_internal.h"

#include "staging/calls.h"
#include "staging/staged_if.h"
#include "staging/sg_variables.h"
#include "staging/staged_loop.h"  // unset_tensor_of_type

namespace sg::compiler::staging {
namespace if_detail {

// The same binding: a variable the branch did not rebind.
bool same_binding(const Value& a, const Value& b) {
  if (a.data.index() != b.data.index()) return false;
  if (a.is<Staged>()) return a.as<Staged>().fn == b.as<Staged>().fn && a.as<Staged>().id == b.as<Staged>().id;
  if (a.is<StaticTensorPtr>()) return a.as<StaticTensorPtr>() == b.as<StaticTensorPtr>();
  if (a.is<ListPtr>()) return a.as<ListPtr>() == b.as<ListPtr>();
  if (a.is<DictPtr>()) return a.as<DictPtr>() == b.as<DictPtr>();
  if (a.is<std::shared_ptr<FunctionV>>()) return a.as<std::shared_ptr<FunctionV>>() == b.as<std::shared_ptr<FunctionV>>();
  if (a.is<TensorListV>()) {
    const TensorListV &x = a.as<TensorListV>(), &y = b.as<TensorListV>();
    if (x.slot != y.slot || x.tensor.has_value() != y.tensor.has_value()) return false;
    return !x.tensor || (x.tensor->fn == y.tensor->fn && x.tensor->id == y.tensor->id);
  }
  if (a.is<TuplePtr>()) {
    const auto &x = *a.as<TuplePtr>(), &y = *b.as<TuplePtr>();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_binding(x[i], y[i])) return false;
    return true;
  }
  if (a.is<UndefinedV>()) return a.as<UndefinedV>().name == b.as<UndefinedV>().name;
  if (a.is<InstancePtr>()) return a.as<InstancePtr>() == b.as<InstancePtr>();
  if (a.is<ClassPtr>()) return a.as<ClassPtr>() == b.as<ClassPtr>();
  if (a.is<BoundFunction>())
    return a.as<BoundFunction>().fn == b.as<BoundFunction>().fn &&
           same_binding(*a.as<BoundFunction>().self, *b.as<BoundFunction>().self);
  if (a.is<ExceptionV>())
    return a.as<ExceptionV>().types == b.as<ExceptionV>().types && a.as<ExceptionV>().message == b.as<ExceptionV>().message;
  return static_equal(a, b).value_or(false);
}

// 'outs', or `state['h']` for an item reached through another container.
std::string quoted(const std::string& name) {
  return name.find('[') == std::string::npos ? "'" + name + "'" : "`" + name + "`";
}

}  // namespace if_detail

using namespace if_detail;

namespace {

void restore(std::vector<Container>& containers) {
  for (Container& c : containers) {
    if (c.list) c.list->items = c.list_items;
    if (c.dict) c.dict->items = c.dict_items;
  }
}

bool defined(const std::map<std::string, Value>& vars, const std::string& name) {
  auto it = vars.find(name);
  return it != vars.end() && !it->second.is<UndefinedV>();
}

// Sets a container to the items another branch left, with stand-ins for the
// items that branch changed (the unchanged ones stay themselves).
void restand(Container& c, const std::vector<Value>& list_items, const std::vector<std::pair<Value, Value>>& dict_items,
             const std::function<Value(const Value&)>& stand_in) {
  if (c.list) {
    c.list->items = list_items;
    for (size_t j = 0; j < c.list->items.size(); ++j)
      if (j >= c.list_items.size() || !same_binding(c.list->items[j], c.list_items[j]))
        c.list->items[j] = stand_in(c.list->items[j]);
  }
  if (c.dict) {
    c.dict->items = dict_items;
    for (size_t j = 0; j < c.dict->items.size(); ++j)
      if (j >= c.dict_items.size() || !same_binding(c.dict->items[j].second, c.dict_items[j].second))
        c.dict->items[j].second = stand_in(c.dict->items[j].second);
  }
}

}  // namespace

Flow Branches::exec_staged_if(const Stmt& s, const Value& test) {
  const ir::Type test_type = s_.tensor_type(test);
  if (test_type.rank() != 0)
    s_.fail(s.test->span, "the test of a staged `if` must be a scalar, got " + s_.module().format_type(test_type) +
                              "; use sg.any or sg.all", s_.provenance_notes({test}));
  staged_branches(s.span, test, "if", [&] { s_.exec_block(s.body); }, [&] { s_.exec_block(s.orelse); });
  return Flow::kNormal;
}

namespace {

bool flag_set(const std::map<std::string, Value>& vars, const char* flag) {
  auto it = vars.find(flag);
  return it != vars.end() && flag_true(&it->second);
}

// A branch that certainly returned (its return flag is a static true).
bool left(const std::map<std::string, Value>& vars) { return flag_set(vars, kReturnFlag); }

}  // namespace

void Branches::staged_branches(SourceSpan span, const Value& test, const std::string& label,
                               const std::function<void()>& then_fn, const std::function<void()>& else_fn) {
  BranchStaging(s_, span, label).run(test, then_fn, else_fn);
}

void BranchStaging::run(const Value& test, const std::function<void()>& then_fn,
                        const std::function<void()>& else_fn) {
  const Value cond = st_.tensor_dtype(test) == DType::kBool
                         ? test
                         : st_.tensor_binary(ops::OpId::NotEqual, test, Value(int64_t(0)), span_);
  cond_id_ = st_.materialize(cond, span_);

  // A return inside a branch sets the flag; the other branch must have it too.
  if (!sc_.find_local(kReturnFlag)) sc_.set(kReturnFlag, Value(false));
  before_ = sc_.vars();
  variables_before_ = st_.variables().current();
  std::vector<std::vector<ControlState::SizeWatch>>& watches = st_.control().size_watches;
  watch_containers();
  struct Unwatch {
    std::vector<std::vector<ControlState::SizeWatch>>& stack;
    size_t size;
    ~Unwatch() { stack.resize(size); }
  } unwatch{watches, watches.size() - 1};
  my_watch_ = watches.size() - 1;
  parent_ = st_.builder();
  base_ = nested_function_name(st_.fn().name, label_ + std::to_string(span_.line));
  then_b_ = branch_or_pending(then_fn, ".then", 0);
  else_b_ = branch_or_pending(else_fn, ".else", 1);
  if (pending_side_ >= 0) restage_pending();
  restage_raising();
  sc_.vars() = before_;
  add_program_variables();

  describe_sides();
  collect_names();
  fill_return_value();
  in_staged_loop_ = find_in_staged_loop();
  returned_side_ = left(then_b_.vars) == left(else_b_.vars) ? -1 : left(then_b_.vars) ? 0 : 1;
  if (returned_side_ >= 0) stand_in_returned_vars();
  join_variables();
  if (returned_side_ >= 0) stand_in_returned_containers();
  join_containers();
  bind_captures();
  emit_node();
  take_program_variables();
  // Both branches raise: so does the `if`, for an enclosing staged branch or loop.
  if (both_raise_ && st_.records().catching_raises()) {
    RaiseSignal r = *else_b_.raised;
    r.staged = true;
    throw r;
  }
}

Branch BranchStaging::run_branch(const std::function<void()>& body, const std::string& suffix) {
  Branch br;
  ir::Module& m = st_.module();
  m.functions.push_back(ir::Function{});
  m.functions.back().name = base_ + suffix;
  br.builder = std::make_unique<FnBuilder>();
  br.builder->fn = int32_t(m.functions.size() - 1);
  br.builder->parent = parent_;
  sc_.vars() = before_;
  st_.variables().current() = variables_before_;
  st_.set_builder(br.builder.get());
  for (ControlState::SizeWatch& w : st_.control().size_watches[my_watch_]) w.changed.reset();
  st_.records().open_raise_catcher();
  try {
    body();
  } catch (RaiseSignal& r) {
    br.raised = std::move(r);
  } catch (...) {
    st_.records().close_raise_catcher();
    st_.set_builder(parent_);
    sc_.vars() = before_;
    st_.variables().current() = variables_before_;
    restore(containers_);
    throw;
  }
  st_.records().close_raise_catcher();
  st_.set_builder(parent_);
  br.vars = sc_.vars();
  br.variables = std::exchange(st_.variables().current(), variables_before_);
  for (const Container& c : containers_) {
    br.list_items.push_back(c.list ? c.list->items : std::vector<Value>{});
    br.dict_items.push_back(c.dict ? c.dict->items : std::vector<std::pair<Value, Value>>{});
  }
  for (const ControlState::SizeWatch& w : st_.control().size_watches[my_watch_]) br.size_changed.push_back(w.changed);
  restore(containers_);
  return br;
}

// Probing a recursive function's result type (staged_call.h): a branch that
// meets a recursive call of unknown result type is pending, and the If
// carries the other branch's values. The pending side is staged again with
// stand-ins of the same types, never read.
Branch BranchStaging::branch_or_pending(const std::function<void()>& body, const std::string& suffix, int k) {
  if (!st_.calls().probing()) return run_branch(body, suffix);
  try {
    return run_branch(body, suffix);
  } catch (const PendingResult& p) {
    if (pending_) throw;  // both branches pending: so is the If
    pending_ = p;
    st_.branches().add_pending();
    pending_side_ = k;
    return Branch{};
  }
}

// Binds what `model` rebound, and sets the containers to its items, with stand-ins
// for the values it changed.
void BranchStaging::leave_stand_ins(const Branch& model, const std::function<Value(const Value&)>& stand_in) {
  for (const auto& [name, v] : model.vars) {
    auto b = before_.find(name);
    if (b == before_.end() || !same_binding(b->second, v)) sc_.set(name, stand_in(v));
  }
  for (size_t i = 0; i < containers_.size(); ++i)
    restand(containers_[i], model.list_items[i], model.dict_items[i], stand_in);
}

void BranchStaging::restage_pending() {
  const Branch& taken = pending_side_ == 0 ? else_b_ : then_b_;
  std::function<Value(const Value&)> stand_in = [&](const Value& v) -> Value {
    if (v.is<Staged>()) return st_.unset_value_like(v, span_);
    if (v.is<TuplePtr>()) {
      std::vector<Value> items;
      for (const Value& item : *v.as<TuplePtr>()) items.push_back(stand_in(item));
      return make_tuple(std::move(items));
    }
    if (v.is<TensorListV>()) throw *pending_;  // no stand-in: the whole If is pending
    return v;
  };
  (pending_side_ == 0 ? then_b_ : else_b_) =
      run_branch([&] { leave_stand_ins(taken, stand_in); }, pending_side_ == 0 ? ".then" : ".else");
}

// A branch that raises stops the run there (an Assert that always fails): it
// is staged again to leave stand-ins of the other branch's values, never read.
void BranchStaging::restage_raising() {
  both_raise_ = then_b_.raised && else_b_.raised;
  for (int k = 0; k < 2; ++k) {
    Branch& dead = k == 0 ? then_b_ : else_b_;
    if (!dead.raised) continue;
    const Branch& live = k == 0 ? else_b_ : then_b_;
    const RaiseSignal signal = *dead.raised;
    std::function<Value(const Value&)> stand_in = [&](const Value& v) -> Value {
      if (v.is<Staged>()) return st_.unset_value_like(v, span_);
      if (v.is<TuplePtr>()) {
        std::vector<Value> items;
        for (const Value& item : *v.as<TuplePtr>()) items.push_back(stand_in(item));
        return make_tuple(std::move(items));
      }
      if (v.is<TensorListV>())
        st_.fail(signal.span, "a branch of this staged `" + label_ + "` raises while the other appends to a list in a "
                              "staged loop; raise after the append instead");
      return v;
    };
    dead = run_branch(
        [&] {
          if (!signal.staged) st_.records().stage_raise(signal);
          if (both_raise_) return;
          leave_stand_ins(live, stand_in);
        },
        k == 0 ? ".then" : ".else");
    if (pending_side_ < 0 && !both_raise_) pending_side_ = k;  // its values do not count in the join
  }
}

// How messages name the two sides: the rest of a block after a staged jump is an
// If of its own, which the program does not spell.
void BranchStaging::describe_sides() {
  construct_ = rest_ ? "the code after a staged break, continue or return (line " + std::to_string(span_.line) + ")"
                     : "this staged `" + label_ + "`";
  then_where_ = rest_ ? " where the code from line " + std::to_string(span_.line) + " on runs"
                      : std::string(" in the then branch");
  else_where_ = rest_ ? " where a staged break, continue or return before line " + std::to_string(span_.line) +
                            " skips it"
                      : " in the else branch of this staged `" + label_ + "`";
}

// Outputs: every variable either branch rebinds.
void BranchStaging::collect_names() {
  for (const auto* vars : {&then_b_.vars, &else_b_.vars})
    for (const auto& [name, v] : *vars) {
      auto b = before_.find(name);
      if ((b == before_.end() || !same_binding(b->second, v)) &&
          std::find(names_.begin(), names_.end(), name) == names_.end())
        names_.push_back(name);
    }
  // A variable a branch deleted (`del x`) is undefined after the `if` unless the other branch rebinds it.
  for (const auto& [name, v] : before_)
    if ((!then_b_.vars.count(name) || !else_b_.vars.count(name)) &&
        std::find(names_.begin(), names_.end(), name) == names_.end())
      names_.push_back(name);
  std::sort(names_.begin(), names_.end());
}

// Runs `f` with branch k's function current.
void BranchStaging::in_branch(int k, const std::function<void()>& f) {
  st_.set_builder(branches_[k]->builder.get());
  try {
    f();
  } catch (...) {
    st_.set_builder(parent_);
    throw;
  }
  st_.set_builder(parent_);
}

// A return value defined on one side only: an unset value on the other.
void BranchStaging::fill_return_value() {
  if (std::find(names_.begin(), names_.end(), kReturnValue) == names_.end()) return;
  const bool t = defined(then_b_.vars, kReturnValue), e = defined(else_b_.vars, kReturnValue);
  if (t == e) return;
  const int have = t ? 0 : 1;
  const Value model = branches_[have]->vars[kReturnValue];
  in_branch(1 - have, [&] { branches_[1 - have]->vars[kReturnValue] = st_.unset_value_like(model, span_); });
}

BranchStaging::Make BranchStaging::join(const std::string& name, const std::string& shown, Value tv, Value ev) {
  if (tv.is<TuplePtr>() && ev.is<TuplePtr>() && tv.as<TuplePtr>()->size() != ev.as<TuplePtr>()->size())
    st_.fail(span_, shown + " is a tuple of " + std::to_string(tv.as<TuplePtr>()->size()) + " items" + then_where_ +
                        " and of " + std::to_string(ev.as<TuplePtr>()->size()) + else_where_ +
                        "; both paths must leave it with one length");
  if (tv.is<TuplePtr>() && ev.is<TuplePtr>() && tv.as<TuplePtr>()->size() == ev.as<TuplePtr>()->size()) {
    std::vector<Make> items;
    for (size_t i = 0; i < tv.as<TuplePtr>()->size(); ++i)
      items.push_back(join(name, shown + "[" + std::to_string(i) + "]", (*tv.as<TuplePtr>())[i], (*ev.as<TuplePtr>())[i]));
    return [items](const std::vector<Value>& outs) {
      std::vector<Value> vals;
      for (const Make& m : items) vals.push_back(m(outs));
      return make_tuple(std::move(vals));
    };
  }
  // Lists of one length join item by item, as tuples do, into a new list.
  if (tv.is<ListPtr>() && ev.is<ListPtr>()) {
    const auto& ti = tv.as<ListPtr>()->items;
    const auto& ei = ev.as<ListPtr>()->items;
    if (ti.size() != ei.size())
      st_.fail(span_, shown + " is a list of " + std::to_string(ti.size()) + " items" + then_where_ + " and of " +
                          std::to_string(ei.size()) + else_where_ + "; both paths must leave it with one length");
    std::vector<Make> items;
    for (size_t i = 0; i < ti.size(); ++i) items.push_back(join(name, shown + "[" + std::to_string(i) + "]", ti[i], ei[i]));
    return [items](const std::vector<Value>& outs) {
      std::vector<Value> vals;
      for (const Make& m : items) vals.push_back(m(outs));
      return make_list(std::move(vals));
    };
  }
  // Records of one class rebound in both branches join field by field, as a new record.
  if (tv.is<InstancePtr>() && ev.is<InstancePtr>() && tv.as<InstancePtr>()->cls == ev.as<InstancePtr>()->cls) {
    const InstancePtr model = tv.as<InstancePtr>();
    Make attrs = join(name, shown, Value(model->attrs), Value(ev.as<InstancePtr>()->attrs));
    return [model, attrs](const std::vector<Value>& outs) {
      auto obj = std::make_shared<InstanceObj>(*model);
      obj->attrs = attrs(outs).as<DictPtr>();
      return Value(obj);
    };
  }
  // Dicts with the same keys in the same order join value by value (a returned dict).
  if (tv.is<DictPtr>() && ev.is<DictPtr>()) {
    const auto& ti = tv.as<DictPtr>()->items;
    const auto& ei = ev.as<DictPtr>()->items;
    bool same_keys = ti.size() == ei.size();
    for (size_t i = 0; same_keys && i < ti.size(); ++i)
      same_keys = static_equal(ti[i].first, ei[i].first).value_or(false);
    if (!same_keys)
      st_.fail(span_, shown + " is a dict with keys " + keys_text(ti) + then_where_ + " and " + keys_text(ei) +
                          else_where_ + "; both need the same keys in the same order");
    std::vector<Value> keys;
    std::vector<Make> items;
    for (size_t i = 0; i < ti.size(); ++i) {
      keys.push_back(ti[i].first);
      items.push_back(join(name, shown + "[" + py_repr(ti[i].first) + "]", ti[i].second, ei[i].second));
    }
    return [keys, items](const std::vector<Value>& outs) {
      auto d = std::make_shared<DictObj>();
      for (size_t i = 0; i < items.size(); ++i) d->items.emplace_back(keys[i], items[i](outs));
      return Value(DictPtr(d));
    };
  }
  return join_leaf(name, shown, std::move(tv), std::move(ev));
}

// A leaf: a tensor list, or tensors and numbers, which become an output unless
// they are one static value.
BranchStaging::Make BranchStaging::join_leaf(const std::string& name, const std::string& shown, Value tv, Value ev) {
  std::shared_ptr<TensorListSlot> slot;
  bool tensor_list = false;
  if (tv.is<TensorListV>() || ev.is<TensorListV>()) {
    if (!tv.is<TensorListV>() || !ev.is<TensorListV>())
      st_.fail(span_, "list '" + name + "' is a tensor list in one branch of " + construct_ + " only");
    slot = tv.as<TensorListV>().slot ? tv.as<TensorListV>().slot : ev.as<TensorListV>().slot;
    tensor_list = true;
    in_branch(0, [&] { tv = Value(st_.resolve_tensor_list(tv.as<TensorListV>(), name, span_)); });
    in_branch(1, [&] { ev = Value(st_.resolve_tensor_list(ev.as<TensorListV>(), name, span_)); });
  }
  if (!tv.is_tensor() && !ev.is_tensor() && static_equal(tv, ev).value_or(false))
    return [tv](const std::vector<Value>&) { return tv; };
  auto tensorish = [](const Value& v) { return v.is_tensor() || v.is_number(); };
  if (!tensorish(tv) || !tensorish(ev)) {
    // Show what differs: the kinds where they differ, else the values.
    const bool same_kind = type_name(tv) == type_name(ev);
    st_.fail(span_, shown + " is " + (same_kind ? py_repr(tv) : "a " + type_name(tv)) + then_where_ + " and " +
                        (same_kind ? py_repr(ev) : "a " + type_name(ev)) + else_where_ +
                        "; only tensors and numbers may differ");
  }
  const std::optional<DType> dt = leaf_dtype(shown, tv, ev);
  const size_t index = add_output(name, shown, tv, ev, dt);
  if (tensor_list)
    return [index, slot](const std::vector<Value>& outs) { return Value(TensorListV{slot, outs[index].as<Staged>()}); };
  return number_make(index, tv, ev);
}

// A number beside a tensor takes the tensor's dtype, where that keeps its
// value; two numbers join when they are of one kind. Anything else would
// change a value on one path (-2.7 into an i64), so it is an error.
std::optional<DType> BranchStaging::leaf_dtype(const std::string& shown, const Value& tv, const Value& ev) {
  std::optional<DType> dt;
  if (tv.is_tensor()) dt = st_.tensor_dtype(tv);
  if (ev.is_tensor()) {
    if (dt && *dt != st_.tensor_dtype(ev)) {
      st_.loops().retype_weak(tv, st_.tensor_dtype(ev));
      st_.loops().retype_weak(ev, *dt);
      st_.fail(span_, shown + " is " + dtype_name(*dt) + then_where_ + " and " +
                          dtype_name(st_.tensor_dtype(ev)) + else_where_ + "; cast one with astype",
               st_.provenance_notes({tv, ev}));
    }
    dt = st_.tensor_dtype(ev);
  }
  const auto kind = [](const Value& v) {
    return v.is<double>() ? "the Python float " : v.is<bool>() ? "the Python bool " : "the Python int ";
  };
  const auto describe = [&](const Value& v) {
    return v.is_tensor() ? std::string(dtype_name(st_.tensor_dtype(v))) : kind(v) + py_repr(v);
  };
  const bool misfit = dt ? (!tv.is_tensor() && !Stager::number_fits(tv, *dt)) ||
                               (!ev.is_tensor() && !Stager::number_fits(ev, *dt))
                         : std::string(kind(tv)) != kind(ev);
  if (misfit && dt) {
    // A carried Python int beside a Python float: the variable is a float.
    if (tv.is<double>()) st_.loops().retype_weak(ev, DType::kF32);
    if (ev.is<double>()) st_.loops().retype_weak(tv, DType::kF32);
  }
  if (misfit)
    st_.fail(span_, shown + " is " + describe(tv) + then_where_ + " and " + describe(ev) +
                        else_where_ + ": they need one dtype; write the number as one of the tensor's dtype or cast with astype",
             st_.provenance_notes({tv, ev}));
  return dt;
}

// Each branch's function returns the leaf as a tensor of `dt`: one more output of
// the If, of the joined type (a dim that differs becomes a symbol). Its index.
size_t BranchStaging::add_output(const std::string& name, const std::string& shown, const Value& tv, const Value& ev,
                                 std::optional<DType> dt) {
  int32_t ids[2];
  ir::Type types[2];
  bool unset[2];
  Value vals[2] = {tv, ev};
  for (int k = 0; k < 2; ++k) {
    in_branch(k, [&] {
      Value tensor = st_.to_tensor(vals[k], dt, span_);
      ids[k] = st_.materialize(tensor, span_);
      types[k] = st_.fn().values[size_t(ids[k])].type;
      unset[k] = st_.control().unset_values.count({st_.builder()->fn, ids[k]}) > 0;
      st_.fn().results.push_back(ids[k]);
    });
  }
  ir::Module& m = st_.module();
  if (types[0].rank() != types[1].rank())
    st_.fail(span_, shown + " is " + m.format_type(types[0]) + then_where_ + " and " +
                        m.format_type(types[1]) + else_where_ + ": the ranks differ",
             st_.provenance_notes({tv, ev}));
  // An unset value or a pending branch's stand-in does not count.
  const bool skip[2] = {unset[0] || pending_side_ == 0, unset[1] || pending_side_ == 1};
  ir::Type joined = skip[0] ? types[1] : types[0];
  if (!skip[0] && !skip[1])
    for (size_t i = 0; i < joined.rank(); ++i)
      if (!(types[0].shape[i] == types[1].shape[i]))
        joined.shape[i] = ir::Dim::symbol(m.symbols.fresh(name[0] == '$' ? "R" : name));
  const size_t index = out_names_.size();
  out_names_.push_back(name);
  out_types_.push_back(std::move(joined));
  return index;
}

// A carried Python number joined with itself or with a number stays one; so do
// two numbers of one kind (`k = 1` in one branch, `k = 2` in the other), which
// are a Python int or float in eager mode on either path.
BranchStaging::Make BranchStaging::number_make(size_t index, const Value& tv, const Value& ev) {
  const WeakOrigin* wt = st_.weak_origin(tv);
  const WeakOrigin* we = st_.weak_origin(ev);
  std::optional<WeakOrigin> weak;
  if (wt && (we ? we->loop == wt->loop && we->name == wt->name : ev.is_number())) weak = *wt;
  else if (we && tv.is_number()) weak = *we;
  else if ((tv.is<int64_t>() && ev.is<int64_t>()) || (tv.is<double>() && ev.is<double>()))
    weak = WeakOrigin::of_number(tv);
  Stager* st = &st_;
  return [st, index, weak](const std::vector<Value>& outs) {
    if (weak) st->loops().mark_weak(outs[index], *weak);
    return outs[index];
  };
}

// A branch that certainly returned never reaches a read of what it did not
// assign: the other branch's value stands, and the If carries an unset value
// from the branch that returned. (After a break or continue the variable may
// still be read after the loop, where eager mode would find it undefined.)
// A variable first assigned on the other path is not read after a jump out of a
// staged loop's iteration either: after a continue the iteration ends, after a break
// the loop does; one first assigned inside the staged loop has a defined flag there
// (control_state.h), which joins like any variable and says which path assigned it.
// (An unrolled loop keeps it across iterations and after the loop, where eager mode
// may find it undefined: there the variable gets a defined flag of its own.)
bool BranchStaging::jumped(const std::map<std::string, Value>& vars) const {
  return left(vars) || (in_staged_loop_ && (flag_set(vars, kBreakFlag) || flag_set(vars, kContinueFlag)));
}

bool BranchStaging::find_in_staged_loop() {
  const Stmt* loop = nullptr;
  for (const BlockPos& b : st_.control().blocks)
    if (b.frame == st_.frame() && b.loop) loop = b.loop;
  for (const ControlState::LoopContainers& lc : st_.control().loop_containers)
    if (loop && lc.loop == loop) return true;
  return false;
}

// A stand-in of `model`'s type (tensors unset, other values kept); none for what
// has no stand-in (a tensor list). `sized`: its symbolic dims take their run-time
// sizes where a value has them, as for a variable that may be unbound after the
// `if`, which a loop may carry on (a gradient's tape records it per iteration).
std::optional<Value> BranchStaging::stand_in_like(const Value& model, bool sized) {
  if (model.is_tensor())
    return sized ? unset_tensor_of_type(st_, st_.tensor_type(model), span_) : st_.unset_value_like(model, span_);
  if (model.is<TuplePtr>() || model.is<ListPtr>()) {
    std::vector<Value> items;
    for (const Value& v : model.is<TuplePtr>() ? *model.as<TuplePtr>() : model.as<ListPtr>()->items) {
      std::optional<Value> item = stand_in_like(v, sized);
      if (!item) return std::nullopt;
      items.push_back(std::move(*item));
    }
    return model.is<TuplePtr>() ? make_tuple(std::move(items)) : make_list(std::move(items));
  }
  if (model.is<DictPtr>()) {
    auto d = std::make_shared<DictObj>();
    for (const auto& [k, v] : model.as<DictPtr>()->items) {
      std::optional<Value> item = stand_in_like(v, sized);
      if (!item) return std::nullopt;
      d->items.emplace_back(k, std::move(*item));
    }
    return Value(DictPtr(d));
  }
  if (model.is<TensorListV>()) return std::nullopt;
  return model;
}

// What a branch that certainly returned leaves in a variable is never read: the
// rest of the function runs only where it did not return. The variable takes a
// stand-in of the other branch's value there, so that a variable the other path
// rebinds (to another shape, or a list of new tensors) joins.
void BranchStaging::stand_in_returned_vars() {
  for (const std::string& name : names_) {
    if (name[0] == '$' || !defined(then_b_.vars, name) || !defined(else_b_.vars, name)) continue;
    const Value& model = branches_[1 - returned_side_]->vars[name];
    if (same_binding(model, branches_[returned_side_]->vars[name])) continue;
    in_branch(returned_side_, [&] {
      if (std::optional<Value> v = stand_in_like(model)) branches_[returned_side_]->vars[name] = *v;
    });
  }
}

// Both branches returned: nothing after the `if` runs, so only the flags and the
// return value join.
void BranchStaging::join_variables() {
  const bool both_returned = left(then_b_.vars) && left(else_b_.vars);
  // A defined flag one branch made: the other, without one, has the variable bound
  // where it has it at all.
  for (const std::string& name : names_)
    if (name.rfind("$defined.", 0) == 0)
      for (Branch* b : branches_)
        if (!b->vars.count(name)) b->vars[name] = Value(defined(b->vars, name.substr(9)));
  for (const std::string& name : names_) {
    if (both_returned && name[0] != '$') {
      sc_.set(name, Value(UndefinedV{name, "", span_, ""}));
      continue;
    }
    if (!defined(then_b_.vars, name) || !defined(else_b_.vars, name)) {
      const bool then_missing = !defined(then_b_.vars, name);
      const int gone = then_missing ? 0 : 1;
      const bool jump = jumped(branches_[gone]->vars);
      if ((!jump && name[0] == '$') || !defined(branches_[1 - gone]->vars, name)) {
        sc_.set(name, Value(UndefinedV{name, then_missing ? "the then branch" : "the else branch", span_, ""}));
        continue;
      }
      const Value model = branches_[1 - gone]->vars[name];
      std::optional<Value> stand_in;
      in_branch(gone, [&] { stand_in = stand_in_like(model, !jump); });
      if (!stand_in) {
        sc_.set(name, Value(UndefinedV{name, then_missing ? "the then branch" : "the else branch", span_, ""}));
        continue;
      }
      branches_[gone]->vars[name] = *stand_in;
      // Assigned on one path only: defined after the `if` where that path ran.
      if (!jump) unbound_on(gone, name);
    }
    std::string shown = "variable '" + name + "'";
    if (name == kReturnValue) shown = "the return value";
    else if (name.rfind("$var.", 0) == 0) shown = "variable '" + name.substr(5) + "'";  // sg.variables
    else if (name[0] == '$')
      shown = "the value of `" + (label_ == "ifexp" ? std::string("x if c else y") : "a " + label_ + " b") + "`";
    makes_.emplace_back(name, join(name, shown, then_b_.vars[name], else_b_.vars[name]));
  }
  for (const std::string& flag : new_flags_)
    makes_.emplace_back(flag, join(flag, "the defined flag of '" + flag.substr(9) + "'", then_b_.vars[flag],
                                   else_b_.vars[flag]));
}

// Branch `gone` leaves `name` unbound (a stand-in of the other's value, never read
// unchecked): its defined flag is false there and joins like a variable.
void BranchStaging::unbound_on(int gone, const std::string& name) {
  const std::string flag = defined_flag(name);
  Branch& kept = *branches_[1 - gone];
  if (!kept.vars.count(flag)) kept.vars[flag] = Value(true);
  branches_[gone]->vars[flag] = Value(false);
  if (std::find(names_.begin(), names_.end(), flag) == names_.end() &&
      std::find(new_flags_.begin(), new_flags_.end(), flag) == new_flags_.end())
    new_flags_.push_back(flag);
  st_.control().unbound_why[name] =
      rest_ ? "a staged break, continue or return before line " + std::to_string(span_.line) + " skipped its assignment"
            : "the staged `" + label_ + "` at line " + std::to_string(span_.line) + " ran its " +
                  (gone == 0 ? "then" : "else") + " branch, which does not assign it";
}

// One capture list for both branches, in a fixed order.
void BranchStaging::bind_captures() {
  auto add_outer = [&](const Staged& v) {
    for (const Staged& o : outer_)
      if (o.id == v.id) return;
    outer_.push_back(v);
  };
  for (const auto& c : then_b_.builder->captures) add_outer(c.second);
  for (const auto& c : else_b_.builder->captures) add_outer(c.second);
  for (Branch* br : {&then_b_, &else_b_}) {
    ir::Function& f = st_.module().functions[size_t(br->builder->fn)];
    std::vector<int32_t> params;
    for (const Staged& o : outer_) {
      int32_t param = -1;
      for (const auto& c : br->builder->captures)
        if (c.second.id == o.id) param = c.first;
      if (param < 0) {
        const ir::Value& ov = st_.fn().values[size_t(o.id)];
        param = f.add_value(ov.type, ov.name, ov.span);
      }
      params.push_back(param);
    }
    f.params = std::move(params);
  }
}

// The If node, its outputs, and the joined variables and containers rebuilt from them.
void BranchStaging::emit_node() {
  ir::Node node;
  node.kind = ir::NodeKind::kIf;
  node.inputs.push_back(cond_id_);
  for (const Staged& o : outer_) node.inputs.push_back(o.id);
  node.functions = {then_b_.builder->fn, else_b_.builder->fn};
  node.span = span_;
  std::vector<Value> outs;
  for (size_t i = 0; i < out_names_.size(); ++i) {
    const int32_t id = st_.fn().add_value(out_types_[i], out_names_[i][0] == '$' ? "" : out_names_[i], span_);
    node.outputs.push_back(id);
    st_.set_origin(st_.builder()->fn, id, Origin{span_, (rest_ ? construct_ : "the staged `" + label_ + "`") + " produced"});
    outs.push_back(st_.staged(id));
  }
  for (const auto& [name, make] : makes_) sc_.set(name, make(outs));
  for (const ContainerJoin& cj : container_joins_) {
    const Container& c = containers_[cj.index];
    if (c.list) {
      c.list->items = then_b_.list_items[cj.index];
      for (const auto& [k, make] : cj.items) c.list->items[k] = make(outs);
    } else {
      c.dict->items = then_b_.dict_items[cj.index];
      for (const auto& [k, make] : cj.items) c.dict->items[k].second = make(outs);
    }
  }
  st_.fn().nodes.push_back(std::move(node));
}

// The program's variables either branch assigns join as hidden variables: the
// side that does not assign one has its value from before the `if` (the start of
// the run where the run has not assigned it yet).
void BranchStaging::add_program_variables() {
  for (const Branch* b : branches_)
    for (const auto& [var, v] : b->variables) {
      auto old = variables_before_.find(var);
      if ((old == variables_before_.end() || !same_binding(old->second, v)) &&
          std::find(joined_variables_.begin(), joined_variables_.end(), var) == joined_variables_.end())
        joined_variables_.push_back(var);
    }
  for (int32_t var : joined_variables_) {
    auto old = variables_before_.find(var);
    const Value start = old != variables_before_.end() ? old->second : st_.variables().start(var, span_);
    const std::string name = st_.variables().carry_name(var);
    before_[name] = start;
    sc_.set(name, start);
    for (Branch* b : branches_) {
      auto it = b->variables.find(var);
      b->vars[name] = it != b->variables.end() ? it->second : start;
    }
  }
}

void BranchStaging::take_program_variables() {
  for (int32_t var : joined_variables_) {
    const std::string name = st_.variables().carry_name(var);
    if (const Value* v = sc_.find_local(name)) st_.variables().current()[var] = *v;
    sc_.erase(name);
  }
}

}  // namespace sg::compiler::staging
