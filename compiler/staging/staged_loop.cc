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

#include "staging/classes.h"
#include "staging/liveness.h"

namespace sg::compiler::staging {
namespace {

// kTarget: a for target read after the loop that had no value before it, where the
// loop provably runs at least once: its initial value is a zero of the item's type,
// overwritten by the first iteration.
enum class CarryKind : uint8_t { kTensor, kList, kFlag, kReturnValue, kStatic, kTarget };

struct Carry {
  std::string name;
  CarryKind kind = CarryKind::kTensor;
  Value init;                             // the value before the loop
  std::optional<WeakOrigin> weak;         // a Python number before the loop, or derived from one
  std::optional<ir::Type> type;           // the carried type, once known
  std::set<size_t> relaxed;               // axes that may change
  std::shared_ptr<TensorListSlot> slot;   // kList
  int32_t body_param = -1, cond_param = -1, body_result = -1;
  Value body_value;                       // the value after one iteration
  bool dropped = false;
  // This loop's Python number (never retyped) that an iteration leaves a number:
  // `k = k * 2 + 1`, not `k = k + x[i]`. After the loop it stands for a Python
  // number still, which takes a tensor's dtype where it meets one, as in eager mode.
  bool number_after = false;
  // kList: an enclosing loop's list that nothing has appended to yet, so its item
  // type is unknown until this loop's body appends; resolved when the node is made.
  std::optional<TensorListV> outer_list;
};

std::string shown_name(const std::string& name) {
  return name[0] == '$' ? "the loop counter" : "variable '" + name + "'";
}

// A return value's tensors and numbers, depth first (tuples and dicts within).
void return_leaves(Stager& st, const Value& v, std::vector<Value>& leaves, SourceSpan span, const std::string& where) {
  if (v.is<TuplePtr>()) {
    for (const Value& item : *v.as<TuplePtr>()) return_leaves(st, item, leaves, span, where);
  } else if (v.is<DictPtr>()) {
    for (const auto& item : v.as<DictPtr>()->items) return_leaves(st, item.second, leaves, span, where);
  } else if (v.is_tensor() || v.is_number()) {
    leaves.push_back(v);
  } else {
    st.fail(span, "returning a " + type_name(v) + " from inside the staged " + where +
                      " is not supported; return tensors (alone, in a tuple or in a dict)");
  }
}

// The items of a tuple or list; null for anything else.
const std::vector<Value>* sequence_items(const Value& v) {
  if (v.is<TuplePtr>()) return &*v.as<TuplePtr>();
  if (v.is<ListPtr>()) return &v.as<ListPtr>()->items;
  return nullptr;
}

// An attribute of an instance carried by a staged loop: tensors, numbers and
// containers of them; other attributes (strings, functions, classes) stay as they are.
bool carried_item(const Value& v) {
  return v.is_tensor() || v.is_number() || v.is<TuplePtr>() || v.is<ListPtr>() || v.is<DictPtr>() ||
         v.is<InstancePtr>();
}

// `shape` with its leaves replaced, in order, by leaves[k...] (a list is a new
// list: a loop body's item assignments stay in the body).
Value rebuild(const Value& shape, const std::vector<Value>& leaves, size_t& k) {
  if (const std::vector<Value>* items = sequence_items(shape)) {
    std::vector<Value> out;
    for (const Value& item : *items) out.push_back(rebuild(item, leaves, k));
    return shape.is<TuplePtr>() ? make_tuple(std::move(out)) : make_list(std::move(out));
  }
  if (shape.is<DictPtr>()) {
    auto d = std::make_shared<DictObj>();
    for (const auto& [key, item] : shape.as<DictPtr>()->items) d->items.emplace_back(key, rebuild(item, leaves, k));
    return Value(DictPtr(d));
  }
  if (shape.is<InstancePtr>()) {  // a record or object rebound in the loop: a new one of its class
    auto obj = std::make_shared<InstanceObj>(*shape.as<InstancePtr>());
    obj->attrs = std::make_shared<DictObj>();
    for (const auto& [key, item] : shape.as<InstancePtr>()->attrs->items)
      obj->attrs->items.emplace_back(key, carried_item(item) ? rebuild(item, leaves, k) : item);
    return Value(obj);
  }
  return leaves[k++];
}

// A tuple, list or dict (nested ones too) of tensors and numbers: carried by a
// staged loop as one value per leaf, rebuilt around them in the body, the cond
// and after the loop. `path` names each leaf for messages ("state[0]").
bool leaves_of(const Value& v, const std::string& path, std::vector<std::pair<std::string, Value>>& out) {
  if (v.is_tensor() || v.is_number()) {
    out.emplace_back(path, v);
    return true;
  }
  if (const std::vector<Value>* items = sequence_items(v)) {
    for (size_t k = 0; k < items->size(); ++k)
      if (!leaves_of((*items)[k], path + "[" + std::to_string(k) + "]", out)) return false;
    return true;
  }
  if (v.is<DictPtr>()) {
    for (const auto& [key, item] : v.as<DictPtr>()->items)
      if (!leaves_of(item, path + "[" + py_repr(key) + "]", out)) return false;
    return true;
  }
  if (v.is<InstancePtr>()) {
    for (const auto& [key, item] : v.as<InstancePtr>()->attrs->items)
      if (carried_item(item) && !leaves_of(item, path + "." + py_str(key), out)) return false;
    return true;
  }
  return false;
}

// Whether `v` has `shape`'s containers (kinds, lengths, keys in order).
bool same_structure(const Value& shape, const Value& v) {
  const std::vector<Value>* a = sequence_items(shape);
  const std::vector<Value>* b = sequence_items(v);
  if (shape.is<InstancePtr>()) {
    if (!v.is<InstancePtr>() || v.as<InstancePtr>()->cls != shape.as<InstancePtr>()->cls) return false;
    const auto &da = shape.as<InstancePtr>()->attrs->items, &db = v.as<InstancePtr>()->attrs->items;
    if (da.size() != db.size()) return false;
    for (size_t k = 0; k < da.size(); ++k)
      if (!static_equal(da[k].first, db[k].first).value_or(false) || carried_item(da[k].second) != carried_item(db[k].second) ||
          (carried_item(da[k].second) && !same_structure(da[k].second, db[k].second)))
        return false;
    return true;
  }
  if (v.is<InstancePtr>()) return false;
  if (!a && !shape.is<DictPtr>()) return !b && !v.is<DictPtr>();
  if (shape.is<DictPtr>()) {
    if (!v.is<DictPtr>()) return false;
    const auto &da = shape.as<DictPtr>()->items, &db = v.as<DictPtr>()->items;
    if (da.size() != db.size()) return false;
    for (size_t k = 0; k < da.size(); ++k)
      if (!static_equal(da[k].first, db[k].first).value_or(false) || !same_structure(da[k].second, db[k].second))
        return false;
    return true;
  }
  if (!b || shape.is<TuplePtr>() != v.is<TuplePtr>() || a->size() != b->size()) return false;
  for (size_t k = 0; k < a->size(); ++k)
    if (!same_structure((*a)[k], (*b)[k])) return false;
  return true;
}

struct Structure {
  std::string name;
  Value shape;                     // the value before the loop
  std::vector<std::string> leaves;  // the leaf carries' names, in order
};

// Instances reachable from the scope before a staged loop, and their
// attributes then: an attribute the body rebinds (`self.h = ...`, also inside
// a method it calls) is carried like a variable, under the hidden name
// "self.h" (AutoGraph's composite names).
struct AttrWatch {
  InstancePtr obj;
  std::string path;
  std::vector<std::pair<Value, Value>> items;
};
struct AttrCarry {
  InstancePtr obj;
  std::string attr;
  std::string name;  // "self.h"
};
// Thrown when staging the body found attributes to carry that this attempt did not.
struct AttrRetry {
  int64_t loop;
  std::vector<AttrCarry> carries;
};

void watch_instances(const std::string& path, const Value& v, std::vector<AttrWatch>& out, int depth) {
  if (depth > 8) return;
  if (v.is<InstancePtr>()) {
    const InstancePtr& o = v.as<InstancePtr>();
    for (const AttrWatch& w : out)
      if (w.obj == o) return;
    out.push_back(AttrWatch{o, path, o->attrs->items});
    for (const auto& [k, item] : o->attrs->items) watch_instances(path + "." + py_str(k), item, out, depth + 1);
  } else if (const std::vector<Value>* items = v.is<TuplePtr>() ? &*v.as<TuplePtr>()
                                               : v.is<ListPtr>() ? &v.as<ListPtr>()->items : nullptr) {
    for (size_t i = 0; i < items->size(); ++i) watch_instances(path + "[" + std::to_string(i) + "]", (*items)[i], out, depth + 1);
  } else if (v.is<DictPtr>()) {
    for (const auto& [k, item] : v.as<DictPtr>()->items) watch_instances(path + "[" + py_repr(k) + "]", item, out, depth + 1);
  }
}

bool same_value(const Value& a, const Value& b) {
  if (a.data.index() != b.data.index()) return false;
  if (a.is<Staged>()) return a.as<Staged>().fn == b.as<Staged>().fn && a.as<Staged>().id == b.as<Staged>().id;
  if (a.is<StaticTensorPtr>()) return a.as<StaticTensorPtr>() == b.as<StaticTensorPtr>();
  if (a.is<ListPtr>()) return a.as<ListPtr>() == b.as<ListPtr>();
  if (a.is<DictPtr>()) return a.as<DictPtr>() == b.as<DictPtr>();
  if (a.is<InstancePtr>()) return a.as<InstancePtr>() == b.as<InstancePtr>();
  if (a.is<TuplePtr>()) {
    const auto &x = *a.as<TuplePtr>(), &y = *b.as<TuplePtr>();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_value(x[i], y[i])) return false;
    return true;
  }
  return static_equal(a, b).value_or(true);
}

// Puts the watched attributes back as they were before the loop, unless dismissed.
struct AttrRestore {
  std::vector<AttrWatch>& watches;
  bool active = true;
  void restore() {
    for (AttrWatch& w : watches) w.obj->attrs->items = w.items;
  }
  ~AttrRestore() {
    if (active) restore();
  }
};

struct Counter {
  int& n;
  explicit Counter(int& c) : n(c) { ++n; }
  ~Counter() { --n; }
};

// The lists and dicts reachable from `v` (through tuples, lists and dicts).
void collect_containers(const Value& v, std::set<const void*>& out) {
  if (v.is<ListPtr>()) {
    if (!out.insert(v.as<ListPtr>().get()).second) return;
    for (const Value& item : v.as<ListPtr>()->items) collect_containers(item, out);
  } else if (v.is<DictPtr>()) {
    if (!out.insert(v.as<DictPtr>().get()).second) return;
    for (const auto& item : v.as<DictPtr>()->items) collect_containers(item.second, out);
  } else if (v.is<TuplePtr>()) {
    for (const Value& item : *v.as<TuplePtr>()) collect_containers(item, out);
  }
}

struct LoopContainersScope {
  ControlState& cs;
  LoopContainersScope(ControlState& c, const Stmt* loop, const std::string& where,
                      const std::map<std::string, Value>& vars)
      : cs(c) {
    ControlState::LoopContainers lc{loop, where, {}};
    for (const auto& [name, v] : vars) collect_containers(v, lc.containers);
    cs.loop_containers.push_back(std::move(lc));
  }
  ~LoopContainersScope() { cs.loop_containers.pop_back(); }
};

}  // namespace

namespace {

// One staging of a loop, phase by phase: what is carried (from the program text),
// the body, the condition, the While node, and the values after the loop.
// `hints`: the dtypes that carried Python numbers take (run_staged_loop).
class LoopStaging {
 public:
  LoopStaging(Stager& st_in, const StagedLoopSpec& spec_in, int64_t token_in,
              const std::map<std::string, DType>& hints_in, const std::vector<AttrCarry>& attr_carries_in);
  Flow run();

 private:
  // What is carried.
  void discover_carries();
  Carry tensor_carry(const std::string& name, const Value& init);
  void attribute_carries();
  void target_carries();
  void variable_carries();
  Carry list_carry(const std::string& name, const Value* before);
  void flag_carries();
  void attrs_from_scope();
  void attrs_to_scope();
  void bind_structures();
  // The body.
  std::unique_ptr<FnBuilder> new_builder(const std::string& suffix);
  void bind_body_params();
  void stage_body();
  void carry_rebound_attrs();
  void structure_results();
  void body_results();
  void return_value_result(Carry& c, Value v);
  void list_result(Carry& c, const Value& v);
  void tensor_result(Carry& c, Value v);
  // The condition.
  void stage_cond();
  Value eval_test();
  // The node and the values after it.
  std::vector<int32_t> node_inputs();
  void bind_function_params();
  void emit_node(std::vector<int32_t> inputs);
  void note_zero_trip_dims();
  void undefine_after();

  Stager& st;
  const StagedLoopSpec& spec;
  const int64_t token;
  const std::map<std::string, DType>& hints;
  const std::vector<AttrCarry>& attr_carries;
  const Stmt& s;
  Scope& sc;
  std::vector<AttrWatch> watches;
  AttrRestore attr_restore{watches};
  ControlState& cs;
  ir::Module& m;
  const std::string where;
  NameSet after, entry, assigned, appended;
  LoopJumps jumps;
  std::vector<Carry> carries;
  std::vector<Structure> structures;
  std::vector<std::pair<std::string, std::string>> undefined_after;  // name, message
  std::set<std::string> carried_targets;
  FnBuilder* outer = nullptr;
  std::map<std::string, Value> outer_vars;
  std::string base;
  std::unique_ptr<FnBuilder> body, cond;
  std::optional<Value> return_shape;
  std::vector<Carry> leaf_carries;
  std::vector<Staged> captured;
};

LoopStaging::LoopStaging(Stager& st_in, const StagedLoopSpec& spec_in, int64_t token_in,
                         const std::map<std::string, DType>& hints_in, const std::vector<AttrCarry>& attr_carries_in)
    : st(st_in), spec(spec_in), token(token_in), hints(hints_in), attr_carries(attr_carries_in), s(spec.stmt),
      sc(st.scope()), cs(st.control()), m(st.module()),
      where(std::string(spec.what) + " loop at line " + std::to_string(s.span.line)) {
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
  return Flow::kNormal;
}

// ---- what is carried, from the program text -----------------------------------
void LoopStaging::discover_carries() {
  after = live_after_current(cs, st.frame());
  entry = loop_entry_live(s, after);
  block_assigns(s.body, assigned);
  jumps = loop_jumps(s.body);
  for (const auto& [name, init] : spec.hidden) {
    Carry c{name, CarryKind::kTensor, init};
    c.type = st.tensor_type(init);
    carries.push_back(std::move(c));
  }
  attribute_carries();
  block_appends(s.body, appended);
  target_carries();
  variable_carries();
  flag_carries();
}

// A carried tensor or number `init` (a variable, or a leaf of a structure).
Carry LoopStaging::tensor_carry(const std::string& name, const Value& init) {
  Carry c{name, CarryKind::kTensor, init};
  std::optional<DType> dtype;
  if (init.is_number()) {
    const auto hint = hints.find(name);
    if (hint != hints.end()) dtype = hint->second;
    c.weak = WeakOrigin{token, name, init, dtype.has_value()};
  } else if (const WeakOrigin* w = st.weak_origin(init)) {
    c.weak = *w;  // an enclosing loop's number, carried through this one
  }
  c.init = st.to_tensor(init, dtype, s.span);
  c.type = st.tensor_type(c.init);
  if (c.init.is<Staged>()) {
    auto r = cs.relaxed.find({c.init.as<Staged>().fn, c.init.as<Staged>().id});
    if (r != cs.relaxed.end())
      for (const auto& [axis, sym] : r->second) {
        c.type->shape[size_t(axis)] = ir::Dim::symbol(sym);
        c.relaxed.insert(size_t(axis));
      }
  }
  return c;
}

void LoopStaging::attribute_carries() {
  for (const AttrCarry& a : attr_carries) {
    const Value* v = find_instance_attr(*a.obj, a.attr);
    if (!v || !(v->is_tensor() || v->is_number()))
      st.fail(s.span, "attribute '" + a.name + "' is " + (v ? "a " + type_name(*v) : std::string("undefined")) +
                          " before the staged " + where + " and changes inside it; only tensors and numbers may "
                          "change in a staged loop");
    carries.push_back(tensor_carry(a.name, *v));
  }
}

// The hidden names of carried attributes, bound in the scope, mirror the attributes.
void LoopStaging::attrs_from_scope() {
  for (const AttrCarry& a : attr_carries)
    if (const Value* v = sc.find_local(a.name)) set_instance_attr(*a.obj, a.attr, *v);
}

void LoopStaging::attrs_to_scope() {
  for (const AttrCarry& a : attr_carries) {
    const Value* v = find_instance_attr(*a.obj, a.attr);
    sc.set(a.name, v ? *v : Value(UndefinedV{a.name, "", s.span, ""}));
  }
}

// A for target read after the loop has Python's value there: the last item, or the
// value it had before the loop when the loop runs zero times. Carried like any
// variable the body assigns; without a value before the loop only where the loop
// provably runs (else reading it after the loop is the error set below).
void LoopStaging::target_carries() {
  for (const std::string& name : spec.targets) {
    if (!after.count(name)) continue;
    const Value* before = sc.lookup(name);
    if (before && !before->is<UndefinedV>()) {
      if (!before->is_tensor() && !before->is_number()) continue;
      carries.push_back(tensor_carry(name, *before));
    } else if (!spec.may_run_zero_times) {
      carries.push_back(Carry{name, CarryKind::kTarget, Value()});
    } else {
      continue;
    }
    carried_targets.insert(name);
  }
}

// Variables the body assigns: carried where live into an iteration or after the
// loop (tuples, dicts and records leaf by leaf); else undefined after it.
void LoopStaging::variable_carries() {
  for (const std::string& name : assigned) {
    if (spec.targets.count(name)) continue;
    const bool live = entry.count(name) || after.count(name);
    const Value* before = sc.lookup(name);
    if (!before || before->is<UndefinedV>()) {
      undefined_after.emplace_back(name, "variable '" + name + "' is first assigned inside the staged " + where +
                                             " and read after it; it would be undefined when the loop runs zero "
                                             "times: assign it before the loop");
      continue;
    }
    if (!live) {
      undefined_after.emplace_back(name, "variable '" + name + "' is changed inside the staged " + where +
                                             " but was not carried out of it");
      continue;
    }
    Carry c{name, CarryKind::kTensor, *before};
    std::vector<std::pair<std::string, Value>> leaves;
    const bool container = before->is<TuplePtr>() || before->is<DictPtr>() || before->is<InstancePtr>() ||
                           (before->is<ListPtr>() && !appended.count(name) && !before->as<ListPtr>()->items.empty());
    if (before->is_tensor() || before->is_number()) {
      c = tensor_carry(name, *before);
    } else if (container && leaves_of(*before, name, leaves) && !leaves.empty()) {
      // A tuple, dict or item-assigned list of tensors and numbers: one carry per leaf.
      Structure st_{name, *before, {}};
      for (const auto& [path, leaf] : leaves) {
        carries.push_back(tensor_carry(path, leaf));
        st_.leaves.push_back(path);
      }
      structures.push_back(std::move(st_));
      continue;
    } else if (before->is<ListPtr>() || before->is<TensorListV>()) {
      c = list_carry(name, before);
    } else {
      c.kind = CarryKind::kStatic;
    }
    carries.push_back(std::move(c));
  }
}

// A list the body may append to: carried as a tensor list.
Carry LoopStaging::list_carry(const std::string& name, const Value* before) {
  Carry c{name, CarryKind::kTensor, *before};
  c.kind = CarryKind::kList;
  c.slot = std::make_shared<TensorListSlot>();
  c.slot->name = name;
  if (before->is<ListPtr>() && !before->as<ListPtr>()->items.empty()) {
    Args a;
    a.pos = {*before};
    a.span = s.span;
    c.init = st.call_sg("stack", a);
  } else if (before->is<TensorListV>()) {
    const TensorListV& l = before->as<TensorListV>();
    if (!l.tensor && l.slot && !l.slot->type && l.slot->param < 0)
      c.outer_list = l;  // appended to first in this loop: its type comes from here
    else
      c.init = Value(st.resolve_tensor_list(l, name, s.span));
  } else {
    c.init = Value();
  }
  if (c.init.is_tensor()) {
    ir::Type t = st.tensor_type(c.init);
    t.shape[0] = ir::Dim::symbol(m.symbols.fresh(name));
    c.slot->type = t;
  }
  return c;
}

void LoopStaging::flag_carries() {
  if (jumps.has_break) carries.push_back(Carry{kBreakFlag, CarryKind::kFlag, Value(false)});
  if (jumps.has_return) {
    carries.push_back(Carry{kReturnFlag, CarryKind::kFlag, Value(false)});
    carries.push_back(Carry{kReturnValue, CarryKind::kReturnValue, Value()});
  }
  for (Carry& c : carries)
    if (c.kind == CarryKind::kFlag) c.type = ir::Type{DType::kBool, {}};
}

// ---- the body -------------------------------------------------------------------
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
        if (c.weak) st.mark_weak(st.staged(c.body_param), *c.weak);
        break;
      case CarryKind::kList:
        c.slot->body = body.get();
        if (c.slot->type) c.slot->param = st.fn().add_value(*c.slot->type, c.name, s.span);
        sc.set(c.name, Value(TensorListV{c.slot, std::nullopt}));
        break;
      case CarryKind::kFlag: sc.set(c.name, Value(false)); break;
      case CarryKind::kReturnValue:
      case CarryKind::kTarget: sc.set(c.name, Value(UndefinedV{c.name, "", s.span, ""})); break;
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
  attrs_from_scope();
  sc.set(kBreakFlag, Value(false));
  sc.set(kContinueFlag, Value(false));
  if (jumps.has_return) sc.set(kReturnFlag, Value(false));
  {
    Counter loops(cs.staged_loops);
    LoopContainersScope containers(cs, &s, "the staged " + where, outer_vars);
    ++st.raise_catchers;
    try {
      spec.prologue();
      st.exec_block(s.body, &s);
    } catch (RaiseSignal& r) {
      // The body raises on every iteration that reaches it: the run stops there.
      try {
        if (!r.staged) st.stage_raise(r);
      } catch (...) {
        --st.raise_catchers;
        throw;
      }
    } catch (...) {
      --st.raise_catchers;
      throw;
    }
    --st.raise_catchers;
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
    if (!vp || !same_structure(x.shape, *vp) || !leaves_of(*vp, x.name, leaves))
      st.fail(s.span, shown_name(x.name) + " is " + py_repr(x.shape) + " before the staged " + where + " and " +
                          (vp ? py_repr(*vp) : std::string("undefined")) + " after an iteration; a tuple, list or "
                          "dict carried by a staged loop must keep its length and keys, with tensors or numbers in it");
    for (size_t k = 0; k < leaves.size(); ++k) sc.set(x.leaves[k], leaves[k].second);
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
      case CarryKind::kTarget:
        if (!v.is_tensor() && !v.is_number())
          st.fail(s.span, "the target '" + c.name + "' of the staged " + where + " is a " + type_name(v) +
                              " at the end of an iteration and read after the loop; only tensors and numbers can "
                              "be carried out of a staged loop");
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
  if (v.is_tensor() && st.tensor_dtype(v) != want) st.retype_weak(st.staged(c.body_param), st.tensor_dtype(v));
  if (v.is_tensor() && st.tensor_dtype(v) != want)
    st.fail(s.span, shown_name(c.name) + " is " + dtype_name(want) + " before the staged " + where + " and " +
                        dtype_name(st.tensor_dtype(v)) + " after an iteration; its dtype must stay fixed: " +
                        "cast with astype", st.provenance_notes({v}));
  v = st.to_tensor(v, want, s.span);
  c.body_result = st.materialize(v, s.span);
  const ir::Type got = st.fn().values[size_t(c.body_result)].type;
  bool same = got.rank() == c.type->rank();
  for (size_t i = 0; same && i < got.rank(); ++i)
    same = c.relaxed.count(i) || got.shape[i] == c.type->shape[i];
  if (!same) {
    std::string axis = "0";
    for (size_t i = 0; i < std::min(got.rank(), c.type->rank()); ++i)
      if (!(got.shape[i] == c.type->shape[i])) {
        axis = std::to_string(i);
        break;
      }
    st.fail(s.span, shown_name(c.name) + " changes shape in the staged " + where + ": " +
                        m.format_type(*c.type) + " before the loop, " + m.format_type(got) +
                        " after an iteration; declare the changing dim before the loop with " + c.name +
                        " = sg.relax(" + c.name + ", \"D\", " + axis + ")",
            st.provenance_notes({v}));
  }
}

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
    if (c.weak) st.mark_weak(st.staged(c.cond_param), *c.weak);
    if (c.kind == CarryKind::kFlag) flags.push_back(c.name);
  }
  bind_structures();
  attrs_from_scope();
  Value go_on;
  if (flags.empty()) {
    go_on = eval_test();
  } else {
    // After a break or return the test must not run (it may fail): an If.
    Value any = *sc.find_local(flags[0]);
    for (size_t k = 1; k < flags.size(); ++k)
      any = st.tensor_binary(ops::OpId::LogicalOr, any, *sc.find_local(flags[k]), s.span);
    st.staged_branches(s.span, st.apply(ops::OpId::LogicalNot, {}, {any}, s.span), "test",
                       [&] { sc.set("$go_on", eval_test()); }, [&] { sc.set("$go_on", Value(false)); });
    go_on = *sc.find_local("$go_on");
  }
  const int32_t cond_result = st.materialize(st.to_tensor(go_on, DType::kBool, s.span), s.span);
  st.fn().results = {cond_result};
  attr_restore.restore();
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
    if (c.kind == CarryKind::kReturnValue || c.kind == CarryKind::kTarget)
      init = st.unset_value_like(c.body_value, s.span);
    if (c.kind == CarryKind::kList && c.outer_list) {
      // The enclosing loop's list takes this loop's item type, under a dim of its own.
      TensorListSlot& outer_slot = *c.outer_list->slot;
      ir::Type t = *c.type;
      t.shape[0] = ir::Dim::symbol(m.symbols.fresh(c.name));
      outer_slot.type = t;
      init = Value(st.resolve_tensor_list(*c.outer_list, c.name, s.span));
    }
    if (c.kind == CarryKind::kList && !init.is_tensor()) init = empty_list_tensor(st, *c.type, c.name, s.span);
    if (c.kind == CarryKind::kFlag) init = st.to_tensor(init, DType::kBool, s.span);
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
    if (c.name[0] == '$' && c.kind == CarryKind::kTensor) continue;  // a hidden counter
    if (c.name == kBreakFlag) continue;                             // consumed by the loop
    if (c.kind == CarryKind::kReturnValue && c.name != kReturnValue) {  // a leaf of a returned tuple or dict
      returned.push_back(st.staged(id));
      continue;
    }
    if (c.kind == CarryKind::kList) sc.set(c.name, Value(TensorListV{nullptr, Staged{outer->fn, id, {}}}));
    else sc.set(c.name, st.staged(id));
    // After the loop its own numbers keep their dtype, taking another only at a use
    // beside a tensor; an enclosing loop's may still change.
    if (c.weak && c.weak->loop != token) st.mark_weak(st.staged(id), *c.weak);
    else if (c.number_after) st.mark_weak(st.staged(id), WeakOrigin::of_number(c.weak->number));
  }
  if (return_shape) {
    size_t k = 0;
    sc.set(kReturnValue, rebuild(*return_shape, returned, k));
  }
  bind_structures();
  for (const Structure& x : structures)
    for (const std::string& leaf : x.leaves) sc.erase(leaf);
  attrs_from_scope();
  attr_restore.active = false;
  for (const AttrCarry& a : attr_carries) sc.erase(a.name);
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

}  // namespace

Flow run_staged_loop(Stager& st, const StagedLoopSpec& spec) {
  const int64_t token = st.new_loop_token();
  std::map<std::string, DType> hints;
  std::vector<AttrCarry> attrs;
  const Stager::Checkpoint start = st.checkpoint();
  for (;;) {
    try {
      return LoopStaging(st, spec, token, hints, attrs).run();
    } catch (const WeakRetype& r) {
      // Each variable changes its dtype at most once (WeakOrigin::retyped).
      if (r.loop != token) throw;
      st.rollback(start);
      hints[r.name] = r.dtype;
    } catch (AttrRetry& r) {
      // Each attempt carries more attributes; there are finitely many.
      if (r.loop != token) throw;
      st.rollback(start);
      attrs = std::move(r.carries);
    }
  }
}

const WeakOrigin* Stager::weak_origin(const Value& v) const {
  if (!v.is<Staged>()) return nullptr;
  auto it = weak_.find({v.as<Staged>().fn, v.as<Staged>().id});
  return it == weak_.end() ? nullptr : &it->second;
}

void Stager::mark_weak(const Value& v, const WeakOrigin& origin) {
  if (v.is<Staged>()) weak_[{v.as<Staged>().fn, v.as<Staged>().id}] = origin;
}

void Stager::mark_weak_int(const Value& v) {
  if (v.is<Staged>() && is_int(tensor_dtype(v)) && tensor_rank(v) == 0 && !weak_origin(v))
    mark_weak(v, WeakOrigin::of_number(Value(int64_t(0))));
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
