// A staged `if` (SPEC §5): both branches are staged into graph functions of
// their own; the variables either branch rebinds become the If node's outputs.
// Values of the enclosing function used inside a branch are captured as branch
// parameters, the same list for both branches (the If node passes them once).
// Flag variables of break/continue/return (control_state.h) join like any
// other variable; a return value missing on one side gets an unset value there,
// never read, since the return flag says which side holds the value.
// Lists and dicts that exist before the `if` may change inside a branch: each
// branch's items are recorded and undone, and the items join like variables.
#include "staging/classes.h"
#include "staging/control_state.h"

namespace sg::compiler::staging {
namespace {

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

struct Branch {
  std::unique_ptr<FnBuilder> builder;
  std::optional<RaiseSignal> raised;  // the branch raises (classes.h): it never completes
  std::map<std::string, Value> vars;
  std::vector<std::vector<Value>> list_items;                 // per Container, as the branch left them
  std::vector<std::vector<std::pair<Value, Value>>> dict_items;
  std::vector<std::optional<SourceSpan>> size_changed;  // per Container: the statement that first changed its length
};

// A list or dict reachable from the scope before a staged `if`, and its items then.
struct Container {
  std::string name;  // as messages show it: outs, state['h'] (py_repr of each key)
  ListPtr list;
  DictPtr dict;
  std::vector<Value> list_items;
  std::vector<std::pair<Value, Value>> dict_items;
};

void collect_containers(const std::string& name, const Value& v, std::vector<Container>& out) {
  auto seen = [&](const void* p) {
    for (const Container& c : out)
      if (c.list.get() == p || c.dict.get() == p) return true;
    return false;
  };
  if (v.is<ListPtr>() && !seen(v.as<ListPtr>().get())) {
    const ListPtr& l = v.as<ListPtr>();
    out.push_back(Container{name, l, nullptr, l->items, {}});
    for (size_t i = 0; i < l->items.size(); ++i)
      collect_containers(name + "[" + std::to_string(i) + "]", l->items[i], out);
  } else if (v.is<DictPtr>() && !seen(v.as<DictPtr>().get())) {
    const DictPtr& d = v.as<DictPtr>();
    out.push_back(Container{name, nullptr, d, {}, d->items});
    for (const auto& [key, item] : d->items) collect_containers(name + "[" + py_repr(key) + "]", item, out);
  } else if (v.is<TuplePtr>()) {
    const auto& items = *v.as<TuplePtr>();
    for (size_t i = 0; i < items.size(); ++i) collect_containers(name + "[" + std::to_string(i) + "]", items[i], out);
  } else if (v.is<InstancePtr>() && !seen(v.as<InstancePtr>()->attrs.get())) {
    // An instance's attributes change in a branch as a dict's items do.
    const DictPtr& d = v.as<InstancePtr>()->attrs;
    out.push_back(Container{name, nullptr, d, {}, d->items});
    for (const auto& [key, item] : d->items) collect_containers(name + "." + py_str(key), item, out);
  }
}

void restore(std::vector<Container>& containers) {
  for (Container& c : containers) {
    if (c.list) c.list->items = c.list_items;
    if (c.dict) c.dict->items = c.dict_items;
  }
}

bool same_items(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_binding(a[i], b[i])) return false;
  return true;
}

bool defined(const std::map<std::string, Value>& vars, const std::string& name) {
  auto it = vars.find(name);
  return it != vars.end() && !it->second.is<UndefinedV>();
}

// 'outs', or `state['h']` for an item reached through another container.
std::string quoted(const std::string& name) {
  return name.find('[') == std::string::npos ? "'" + name + "'" : "`" + name + "`";
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

size_t size_of(const void* container, bool is_list) {
  return is_list ? static_cast<const ListObj*>(container)->items.size()
                 : static_cast<const DictObj*>(container)->items.size();
}

}  // namespace

void note_size_changes(ControlState& cs, SourceSpan span) {
  for (std::vector<ControlState::SizeWatch>& level : cs.size_watches)
    for (ControlState::SizeWatch& w : level)
      if (!w.changed && size_of(w.container, w.is_list) != w.size) w.changed = span;
}

Flow Stager::exec_staged_if(const Stmt& s, const Value& test) {
  const ir::Type test_type = tensor_type(test);
  if (test_type.rank() != 0)
    fail(s.test->span, "the test of a staged `if` must be a scalar, got " + module_->format_type(test_type) +
                           "; use sg.any or sg.all", provenance_notes({test}));
  staged_branches(s.span, test, "if", [&] { exec_block(s.body); }, [&] { exec_block(s.orelse); });
  return Flow::kNormal;
}

void Stager::staged_branches(SourceSpan span, const Value& test, const std::string& label,
                             const std::function<void()>& then_fn, const std::function<void()>& else_fn) {
  const Value cond = tensor_dtype(test) == DType::kBool
                         ? test
                         : tensor_binary(ops::OpId::NotEqual, test, Value(int64_t(0)), span);
  const int32_t cond_id = materialize(cond, span);

  Scope& sc = scope();
  // A return inside a branch sets the flag; the other branch must have it too.
  if (!sc.find_local(kReturnFlag)) sc.set(kReturnFlag, Value(false));
  const std::map<std::string, Value> before = sc.vars();
  // Lists and dicts visible before the `if`: each branch starts from their items
  // as they are now and leaves them so again; the joined items are set after.
  std::vector<Container> containers;
  for (const Scope* sp = &sc; sp; sp = sp->parent().get())
    for (const auto& [name, v] : sp->vars()) collect_containers(name, v, containers);
  std::vector<std::vector<ControlState::SizeWatch>>& watches = control().size_watches;
  watches.emplace_back();
  for (const Container& c : containers)
    watches.back().push_back(c.list ? ControlState::SizeWatch{c.list.get(), true, c.list_items.size(), {}}
                                    : ControlState::SizeWatch{c.dict.get(), false, c.dict_items.size(), {}});
  struct Unwatch {
    std::vector<std::vector<ControlState::SizeWatch>>& stack;
    size_t size;
    ~Unwatch() { stack.resize(size); }
  } unwatch{watches, watches.size() - 1};
  const size_t my_watch = watches.size() - 1;
  FnBuilder* parent = cur_;
  const std::string base = nested_function_name(fn().name, label + std::to_string(span.line));
  auto run_branch = [&](const std::function<void()>& body, const std::string& suffix) {
    Branch br;
    module_->functions.push_back(ir::Function{});
    module_->functions.back().name = base + suffix;
    br.builder = std::make_unique<FnBuilder>();
    br.builder->fn = int32_t(module_->functions.size() - 1);
    br.builder->parent = parent;
    sc.vars() = before;
    cur_ = br.builder.get();
    for (ControlState::SizeWatch& w : control().size_watches[my_watch]) w.changed.reset();
    ++raise_catchers;
    try {
      body();
    } catch (RaiseSignal& r) {
      br.raised = std::move(r);
    } catch (...) {
      --raise_catchers;
      cur_ = parent;
      sc.vars() = before;
      restore(containers);
      throw;
    }
    --raise_catchers;
    cur_ = parent;
    br.vars = sc.vars();
    for (const Container& c : containers) {
      br.list_items.push_back(c.list ? c.list->items : std::vector<Value>{});
      br.dict_items.push_back(c.dict ? c.dict->items : std::vector<std::pair<Value, Value>>{});
    }
    for (const ControlState::SizeWatch& w : control().size_watches[my_watch]) br.size_changed.push_back(w.changed);
    restore(containers);
    return br;
  };
  // Probing a recursive function's result type (staged_call.h): a branch that
  // meets a recursive call of unknown result type is pending, and the If
  // carries the other branch's values. The pending side is staged again with
  // stand-ins of the same types, never read.
  int pending_side = -1;
  std::optional<PendingResult> pending;
  auto branch_or_pending = [&](const std::function<void()>& body, const std::string& suffix, int k) {
    if (!probing()) return run_branch(body, suffix);
    try {
      return run_branch(body, suffix);
    } catch (const PendingResult& p) {
      if (pending) throw;  // both branches pending: so is the If
      pending = p;
      ++pending_branches_;
      pending_side = k;
      return Branch{};
    }
  };
  Branch then_b = branch_or_pending(then_fn, ".then", 0);
  Branch else_b = branch_or_pending(else_fn, ".else", 1);
  if (pending_side >= 0) {
    const Branch& taken = pending_side == 0 ? else_b : then_b;
    std::function<Value(const Value&)> stand_in = [&](const Value& v) -> Value {
      if (v.is<Staged>()) return unset_value_like(v, span);
      if (v.is<TuplePtr>()) {
        std::vector<Value> items;
        for (const Value& item : *v.as<TuplePtr>()) items.push_back(stand_in(item));
        return make_tuple(std::move(items));
      }
      if (v.is<TensorListV>()) throw *pending;  // no stand-in: the whole If is pending
      return v;
    };
    (pending_side == 0 ? then_b : else_b) = run_branch(
        [&] {
          for (const auto& [name, v] : taken.vars) {
            auto b = before.find(name);
            if (b == before.end() || !same_binding(b->second, v)) sc.set(name, stand_in(v));
          }
          for (size_t i = 0; i < containers.size(); ++i) restand(containers[i], taken.list_items[i], taken.dict_items[i], stand_in);
        },
        pending_side == 0 ? ".then" : ".else");
  }
  // A branch that raises stops the run there (an Assert that always fails): it
  // is staged again to leave stand-ins of the other branch's values, never read.
  const bool both_raise = then_b.raised && else_b.raised;
  for (int k = 0; k < 2; ++k) {
    Branch& dead = k == 0 ? then_b : else_b;
    if (!dead.raised) continue;
    const Branch& live = k == 0 ? else_b : then_b;
    const RaiseSignal signal = *dead.raised;
    std::function<Value(const Value&)> stand_in = [&](const Value& v) -> Value {
      if (v.is<Staged>()) return unset_value_like(v, span);
      if (v.is<TuplePtr>()) {
        std::vector<Value> items;
        for (const Value& item : *v.as<TuplePtr>()) items.push_back(stand_in(item));
        return make_tuple(std::move(items));
      }
      if (v.is<TensorListV>())
        fail(signal.span, "a branch of this staged `" + label + "` raises while the other appends to a list in a "
                          "staged loop; raise after the append instead");
      return v;
    };
    dead = run_branch(
        [&] {
          if (!signal.staged) stage_raise(signal);
          if (both_raise) return;
          for (const auto& [name, v] : live.vars) {
            auto b = before.find(name);
            if (b == before.end() || !same_binding(b->second, v)) sc.set(name, stand_in(v));
          }
          for (size_t i = 0; i < containers.size(); ++i) restand(containers[i], live.list_items[i], live.dict_items[i], stand_in);
        },
        k == 0 ? ".then" : ".else");
    if (pending_side < 0 && !both_raise) pending_side = k;  // its values do not count in the join
  }
  sc.vars() = before;

  // How messages name the two sides: the rest of a block after a staged jump is an
  // If of its own, which the program does not spell.
  const bool rest = label == "rest";
  const std::string construct =
      rest ? "the code after a staged break, continue or return (line " + std::to_string(span.line) + ")"
           : "this staged `" + label + "`";
  const std::string then_where = rest ? " where the code from line " + std::to_string(span.line) + " on runs"
                                      : std::string(" in the then branch");
  const std::string else_where = rest ? " where a staged break, continue or return before line " +
                                            std::to_string(span.line) + " skips it"
                                      : " in the else branch of this staged `" + label + "`";

  // Outputs: every variable either branch rebinds.
  std::vector<std::string> names;
  for (const auto* vars : {&then_b.vars, &else_b.vars})
    for (const auto& [name, v] : *vars) {
      auto b = before.find(name);
      if ((b == before.end() || !same_binding(b->second, v)) &&
          std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    }
  // A variable a branch deleted (`del x`) is undefined after the `if` unless the other branch rebinds it.
  for (const auto& [name, v] : before)
    if ((!then_b.vars.count(name) || !else_b.vars.count(name)) &&
        std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  std::sort(names.begin(), names.end());
  Branch* branches[2] = {&then_b, &else_b};
  auto in_branch = [&](int k, const std::function<void()>& f) {
    cur_ = branches[k]->builder.get();
    try {
      f();
    } catch (...) {
      cur_ = parent;
      throw;
    }
    cur_ = parent;
  };
  // A return value defined on one side only: an unset value on the other.
  if (std::find(names.begin(), names.end(), kReturnValue) != names.end()) {
    const bool t = defined(then_b.vars, kReturnValue), e = defined(else_b.vars, kReturnValue);
    if (t != e) {
      const int have = t ? 0 : 1;
      const Value model = branches[have]->vars[kReturnValue];
      in_branch(1 - have, [&] { branches[1 - have]->vars[kReturnValue] = unset_value_like(model, span); });
    }
  }

  // Each variable joins leaf by leaf (tuples item by item); a leaf that differs
  // becomes an output, and `make` rebuilds the variable from the outputs.
  using Make = std::function<Value(const std::vector<Value>&)>;
  std::vector<std::string> out_names;
  std::vector<ir::Type> out_types;
  std::function<Make(const std::string&, const std::string&, Value, Value)> join =
      [&](const std::string& name, const std::string& shown, Value tv, Value ev) -> Make {
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
        fail(span, shown + " is a dict with keys " + py_repr(tv) + then_where + " and " + py_repr(ev) +
                       else_where + "; both need the same keys in the same order");
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
    std::shared_ptr<TensorListSlot> slot;
    bool tensor_list = false;
    if (tv.is<TensorListV>() || ev.is<TensorListV>()) {
      if (!tv.is<TensorListV>() || !ev.is<TensorListV>())
        fail(span, "list '" + name + "' is a tensor list in one branch of " + construct + " only");
      slot = tv.as<TensorListV>().slot ? tv.as<TensorListV>().slot : ev.as<TensorListV>().slot;
      tensor_list = true;
      in_branch(0, [&] { tv = Value(resolve_tensor_list(tv.as<TensorListV>(), name, span)); });
      in_branch(1, [&] { ev = Value(resolve_tensor_list(ev.as<TensorListV>(), name, span)); });
    }
    if (!tv.is_tensor() && !ev.is_tensor() && static_equal(tv, ev).value_or(false))
      return [tv](const std::vector<Value>&) { return tv; };
    auto tensorish = [](const Value& v) { return v.is_tensor() || v.is_number(); };
    if (!tensorish(tv) || !tensorish(ev))
      fail(span, shown + " is " + py_repr(tv) + then_where + " and " + py_repr(ev) +
                     else_where + "; only tensors and numbers may differ");
    // A number beside a tensor takes the tensor's dtype, where that keeps its
    // value; two numbers join when they are of one kind. Anything else would
    // change a value on one path (-2.7 into an i64), so it is an error.
    std::optional<DType> dt;
    if (tv.is_tensor()) dt = tensor_dtype(tv);
    if (ev.is_tensor()) {
      if (dt && *dt != tensor_dtype(ev)) {
        retype_weak(tv, tensor_dtype(ev));
        retype_weak(ev, *dt);
        fail(span, shown + " is " + dtype_name(*dt) + then_where + " and " +
                       dtype_name(tensor_dtype(ev)) + else_where + "; cast one with astype",
             provenance_notes({tv, ev}));
      }
      dt = tensor_dtype(ev);
    }
    const auto kind = [](const Value& v) {
      return v.is<double>() ? "the Python float " : v.is<bool>() ? "the Python bool " : "the Python int ";
    };
    const auto describe = [&](const Value& v) {
      return v.is_tensor() ? std::string(dtype_name(tensor_dtype(v))) : kind(v) + py_repr(v);
    };
    const bool misfit = dt ? (!tv.is_tensor() && !number_fits(tv, *dt)) ||
                                 (!ev.is_tensor() && !number_fits(ev, *dt))
                           : std::string(kind(tv)) != kind(ev);
    if (misfit && dt) {
      // A carried Python int beside a Python float: the variable is a float.
      if (tv.is<double>()) retype_weak(ev, DType::kF32);
      if (ev.is<double>()) retype_weak(tv, DType::kF32);
    }
    if (misfit)
      fail(span, shown + " is " + describe(tv) + then_where + " and " + describe(ev) +
                     else_where + ": they need one dtype; write the number as one of the tensor's dtype or cast with astype",
           provenance_notes({tv, ev}));
    int32_t ids[2];
    ir::Type types[2];
    bool unset[2];
    Value vals[2] = {tv, ev};
    for (int k = 0; k < 2; ++k) {
      in_branch(k, [&] {
        Value tensor = to_tensor(vals[k], dt, span);
        ids[k] = materialize(tensor, span);
        types[k] = fn().values[size_t(ids[k])].type;
        unset[k] = control().unset_values.count({cur_->fn, ids[k]}) > 0;
        fn().results.push_back(ids[k]);
      });
    }
    if (types[0].rank() != types[1].rank())
      fail(span, shown + " is " + module_->format_type(types[0]) + then_where + " and " +
                     module_->format_type(types[1]) + else_where + ": the ranks differ",
           provenance_notes({tv, ev}));
    // An unset value or a pending branch's stand-in does not count.
    const bool skip[2] = {unset[0] || pending_side == 0, unset[1] || pending_side == 1};
    ir::Type joined = skip[0] ? types[1] : types[0];
    if (!skip[0] && !skip[1])
      for (size_t i = 0; i < joined.rank(); ++i)
        if (!(types[0].shape[i] == types[1].shape[i]))
          joined.shape[i] = ir::Dim::symbol(module_->symbols.fresh(name[0] == '$' ? "R" : name));
    const size_t index = out_names.size();
    out_names.push_back(name);
    out_types.push_back(std::move(joined));
    if (tensor_list)
      return [index, slot](const std::vector<Value>& outs) { return Value(TensorListV{slot, outs[index].as<Staged>()}); };
    // A carried Python number joined with itself or with a number stays one; so do
    // two numbers of one kind (`k = 1` in one branch, `k = 2` in the other), which
    // are a Python int or float in eager mode on either path.
    const WeakOrigin* wt = weak_origin(tv);
    const WeakOrigin* we = weak_origin(ev);
    std::optional<WeakOrigin> weak;
    if (wt && (we ? we->loop == wt->loop && we->name == wt->name : ev.is_number())) weak = *wt;
    else if (we && tv.is_number()) weak = *we;
    else if ((tv.is<int64_t>() && ev.is<int64_t>()) || (tv.is<double>() && ev.is<double>()))
      weak = WeakOrigin::of_number(tv);
    return [this, index, weak](const std::vector<Value>& outs) {
      if (weak) mark_weak(outs[index], *weak);
      return outs[index];
    };
  };
  // A branch that certainly returned never reaches a read of what it did not
  // assign: the other branch's value stands, and the If carries an unset value
  // from the branch that returned. (After a break or continue the variable may
  // still be read after the loop, where eager mode would find it undefined.)
  auto flag_set = [](const std::map<std::string, Value>& vars, const char* flag) {
    auto it = vars.find(flag);
    return it != vars.end() && flag_true(&it->second);
  };
  auto left = [&](const std::map<std::string, Value>& vars) { return flag_set(vars, kReturnFlag); };
  // A variable first assigned on the other path is not read after a jump out of a
  // staged loop's iteration either: after a continue the iteration ends, after a break
  // the loop does, and a variable first assigned inside a staged loop is not readable
  // after it (nor carried into the next iteration) unless it had a value before the
  // loop, which it would then have here. (An unrolled loop keeps it across iterations
  // and after the loop, where eager mode may find it undefined.)
  const bool in_staged_loop = [&] {
    const Stmt* loop = nullptr;
    for (const BlockPos& b : control().blocks)
      if (b.frame == frame_ && b.loop) loop = b.loop;
    for (const ControlState::LoopContainers& lc : control().loop_containers)
      if (loop && lc.loop == loop) return true;
    return false;
  }();
  auto jumped = [&](const std::map<std::string, Value>& vars) {
    return left(vars) || (in_staged_loop && (flag_set(vars, kBreakFlag) || flag_set(vars, kContinueFlag)));
  };
  // A stand-in of `model`'s type (tensors unset, other values kept); none for what
  // has no stand-in (a tensor list).
  std::function<std::optional<Value>(const Value&)> stand_in_like = [&](const Value& model) -> std::optional<Value> {
    if (model.is_tensor()) return unset_value_like(model, span);
    if (model.is<TuplePtr>() || model.is<ListPtr>()) {
      std::vector<Value> items;
      for (const Value& v : model.is<TuplePtr>() ? *model.as<TuplePtr>() : model.as<ListPtr>()->items) {
        std::optional<Value> item = stand_in_like(v);
        if (!item) return std::nullopt;
        items.push_back(std::move(*item));
      }
      return model.is<TuplePtr>() ? make_tuple(std::move(items)) : make_list(std::move(items));
    }
    if (model.is<DictPtr>()) {
      auto d = std::make_shared<DictObj>();
      for (const auto& [k, v] : model.as<DictPtr>()->items) {
        std::optional<Value> item = stand_in_like(v);
        if (!item) return std::nullopt;
        d->items.emplace_back(k, std::move(*item));
      }
      return Value(DictPtr(d));
    }
    if (model.is<TensorListV>()) return std::nullopt;
    return model;
  };
  // What a branch that certainly returned leaves in a variable is never read: the
  // rest of the function runs only where it did not return. The variable takes a
  // stand-in of the other branch's value there, so that a variable the other path
  // rebinds (to another shape, or a list of new tensors) joins.
  const int returned_side = left(then_b.vars) == left(else_b.vars) ? -1 : left(then_b.vars) ? 0 : 1;
  if (returned_side >= 0)
    for (const std::string& name : names) {
      if (name[0] == '$' || !defined(then_b.vars, name) || !defined(else_b.vars, name)) continue;
      const Value& model = branches[1 - returned_side]->vars[name];
      if (same_binding(model, branches[returned_side]->vars[name])) continue;
      in_branch(returned_side, [&] {
        if (std::optional<Value> v = stand_in_like(model)) branches[returned_side]->vars[name] = *v;
      });
    }
  // Both branches returned: nothing after the `if` runs, so only the flags and the
  // return value join.
  const bool both_returned = left(then_b.vars) && left(else_b.vars);
  std::vector<std::pair<std::string, Make>> makes;
  for (const std::string& name : names) {
    if (both_returned && name[0] != '$') {
      sc.set(name, Value(UndefinedV{name, "", span, ""}));
      continue;
    }
    if (!defined(then_b.vars, name) || !defined(else_b.vars, name)) {
      const bool then_missing = !defined(then_b.vars, name);
      const int gone = then_missing ? 0 : 1;
      if (!jumped(branches[gone]->vars) || !defined(branches[1 - gone]->vars, name)) {
        sc.set(name, Value(UndefinedV{name, then_missing ? "the then branch" : "the else branch", span, ""}));
        continue;
      }
      const Value model = branches[1 - gone]->vars[name];
      std::optional<Value> stand_in;
      in_branch(gone, [&] { stand_in = stand_in_like(model); });
      if (!stand_in) {
        sc.set(name, Value(UndefinedV{name, then_missing ? "the then branch" : "the else branch", span, ""}));
        continue;
      }
      branches[gone]->vars[name] = *stand_in;
    }
    const std::string shown = name == kReturnValue ? std::string("the return value")
                              : name[0] == '$'     ? "the value of `" + (label == "ifexp" ? std::string("x if c else y")
                                                                                           : "a " + label + " b") + "`"
                                                   : "variable '" + name + "'";
    makes.emplace_back(name, join(name, shown, then_b.vars[name], else_b.vars[name]));
  }

  // Lists and dicts a branch changed: both sides leave the same length (the same
  // keys in the same order), and the items that differ join like variables.
  struct ContainerJoin {
    size_t index;
    std::vector<std::pair<size_t, Make>> items;  // item index -> its join
  };
  std::vector<ContainerJoin> container_joins;
  auto items = [](size_t n) { return std::to_string(n) + (n == 1 ? " item" : " items"); };
  // Reported at the statement that changed the length (the then branch's first),
  // with the `if` as a note.
  auto size_mismatch = [&](size_t i, const std::string& kind, const std::string& then_has,
                           const std::string& else_has) {
    const std::optional<SourceSpan>& at = then_b.size_changed[i] ? then_b.size_changed[i] : else_b.size_changed[i];
    fail(at.value_or(span),
          kind + " " + quoted(containers[i].name) + " has " + then_has + " of " + (rest ? construct : "the staged `" + label + "`") + " at line " +
             std::to_string(span.line) + " and " + else_has + " in the else branch; both paths must leave it " +
             (kind == "list" ? "with one length (a list appended to inside a staged loop becomes a tensor list, "
                               "which may grow)"
                             : "with the same keys in the same order"),
         {Note{span, rest ? construct : "the staged `" + label + "`"}});
  };
  // A branch that certainly returned leaves the lists and dicts as the other one
  // does, with stand-ins for the items that one changed (never read, as above).
  if (returned_side >= 0)
    for (size_t i = 0; i < containers.size(); ++i) {
      Branch& keep = *branches[1 - returned_side];
      Branch& gone = *branches[returned_side];
      const Container& c = containers[i];
      bool ok = true;
      in_branch(returned_side, [&] {
        if (c.list) {
          std::vector<Value> kept_items;
          for (size_t k = 0; ok && k < keep.list_items[i].size(); ++k) {
            const Value& v = keep.list_items[i][k];
            std::optional<Value> item =
                k < c.list_items.size() && same_binding(v, c.list_items[k]) ? std::optional<Value>(v) : stand_in_like(v);
            if (item) kept_items.push_back(std::move(*item));
            else ok = false;
          }
          if (ok) gone.list_items[i] = std::move(kept_items);
        } else {
          std::vector<std::pair<Value, Value>> kept_items;
          for (size_t k = 0; ok && k < keep.dict_items[i].size(); ++k) {
            const auto& [key, v] = keep.dict_items[i][k];
            std::optional<Value> item = k < c.dict_items.size() && same_binding(v, c.dict_items[k].second)
                                            ? std::optional<Value>(v)
                                            : stand_in_like(v);
            if (item) kept_items.emplace_back(key, std::move(*item));
            else ok = false;
          }
          if (ok) gone.dict_items[i] = std::move(kept_items);
        }
      });
      if (ok) gone.size_changed[i].reset();
    }
  for (size_t i = 0; i < containers.size(); ++i) {
    const Container& c = containers[i];
    const std::string root = c.name.substr(0, c.name.find('['));
    ContainerJoin cj{i, {}};
    if (c.list) {
      const std::vector<Value>&t = then_b.list_items[i], &e = else_b.list_items[i];
      if (same_items(t, c.list_items) && same_items(e, c.list_items)) continue;
      if (t.size() != e.size()) size_mismatch(i, "list", items(t.size()) + " in the then branch", items(e.size()));
      for (size_t k = 0; k < t.size(); ++k)
        if (!same_binding(t[k], e[k]))
          cj.items.emplace_back(k, join(root, "item " + std::to_string(k) + " of list " + quoted(c.name), t[k], e[k]));
    } else {
      const auto &t = then_b.dict_items[i], &e = else_b.dict_items[i];
      auto same_dict = [](const std::vector<std::pair<Value, Value>>& x, const std::vector<std::pair<Value, Value>>& y) {
        if (x.size() != y.size()) return false;
        for (size_t k = 0; k < x.size(); ++k)
          if (!same_binding(x[k].first, y[k].first) || !same_binding(x[k].second, y[k].second)) return false;
        return true;
      };
      if (same_dict(t, c.dict_items) && same_dict(e, c.dict_items)) continue;
      auto keys = [](const std::vector<std::pair<Value, Value>>& kv) {
        std::string out = "[";
        for (size_t k = 0; k < kv.size(); ++k) out += (k ? ", " : "") + py_repr(kv[k].first);
        return out + "]";
      };
      bool same_keys = t.size() == e.size();
      for (size_t k = 0; same_keys && k < t.size(); ++k) same_keys = static_equal(t[k].first, e[k].first).value_or(false);
      if (!same_keys) size_mismatch(i, "dict", "keys " + keys(t) + " in the then branch", "keys " + keys(e));
      for (size_t k = 0; k < t.size(); ++k)
        if (!same_binding(t[k].second, e[k].second))
          cj.items.emplace_back(k, join(root, "`" + c.name + "[" + py_repr(t[k].first) + "]`", t[k].second,
                                        e[k].second));
    }
    container_joins.push_back(std::move(cj));
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
  node.span = span;
  std::vector<Value> outs;
  for (size_t i = 0; i < out_names.size(); ++i) {
    const int32_t id = fn().add_value(out_types[i], out_names[i][0] == '$' ? "" : out_names[i], span);
    node.outputs.push_back(id);
    set_origin(cur_->fn, id, Origin{span, (rest ? construct : "the staged `" + label + "`") + " produced"});
    outs.push_back(staged(id));
  }
  for (const auto& [name, make] : makes) sc.set(name, make(outs));
  for (const ContainerJoin& cj : container_joins) {
    const Container& c = containers[cj.index];
    if (c.list) {
      c.list->items = then_b.list_items[cj.index];
      for (const auto& [k, make] : cj.items) c.list->items[k] = make(outs);
    } else {
      c.dict->items = then_b.dict_items[cj.index];
      for (const auto& [k, make] : cj.items) c.dict->items[k].second = make(outs);
    }
  }
  fn().nodes.push_back(std::move(node));
  // Both branches raise: so does the `if`, for an enclosing staged branch or loop.
  if (both_raise && raise_catchers > 0) {
    RaiseSignal r = *else_b.raised;
    r.staged = true;
    throw r;
  }
}

}  // namespace sg::compiler::staging
