// What a staged loop carries, decided from the program text before anything is
// staged: tensors and numbers the body assigns that are live, lists it appends to,
// instance attributes it rebinds, for targets read after it, and its jump flags.
#include "staging/sg_variables.h"
#include "staging/staged_loop_internal.h"

namespace sg::compiler::staging::loop_detail {

void LoopStaging::discover_carries() {
  after = live_after_current(cs, st.frame());
  entry = loop_entry_live(s, after);
  // Live into an iteration from the body itself, not from after the loop.
  read_in_body = loop_entry_live(s, NameSet{});
  block_assigns(s.body, assigned);
  jumps = loop_jumps(s.body);
  for (const auto& [name, init] : spec.hidden) {
    Carry c{name, CarryKind::kTensor, init};
    c.type = st.tensor_type(init);
    carries.push_back(std::move(c));
  }
  attribute_carries();
  program_variable_carries();
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
  // Dims an earlier attempt saw change across an iteration: a fresh symbol each.
  auto a = retry.relax.find(name);
  if (a != retry.relax.end())
    for (size_t axis : a->second) {
      if (c.relaxed.count(axis) || axis >= c.type->rank()) continue;
      std::string base = name.substr(0, name.find_first_of("[.'\""));
      if (base.empty() || base[0] == '$') base = "D";
      c.type->shape[axis] = ir::Dim::symbol(m.symbols.fresh(base));
      c.relaxed.insert(axis);
      c.auto_relaxed.insert(axis);
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

// The program's variables the body assigns (an earlier attempt found them) are
// carried like variables, from their values before the loop.
void LoopStaging::program_variable_carries() {
  for (int32_t var : retry.variables) {
    auto before = variables_before.find(var);
    const Value init = before != variables_before.end() ? before->second : st.variables().start(var, s.span);
    carries.push_back(tensor_carry(st.variables().carry_name(var), init));
  }
}

// The hidden names of carried program variables, bound in the scope, are the
// variables' values from there on.
void LoopStaging::variables_from_scope() {
  for (int32_t var : retry.variables)
    if (const Value* v = sc.find_local(st.variables().carry_name(var))) st.variables().current()[var] = *v;
}

// After the body: the carried variables' values as its results; a variable it
// assigns that this attempt does not carry makes another attempt that does.
void LoopStaging::carry_assigned_variables() {
  std::vector<int32_t> more = retry.variables;
  for (const auto& [var, v] : st.variables().current()) {
    if (std::find(more.begin(), more.end(), var) != more.end()) {
      sc.set(st.variables().carry_name(var), v);
      continue;
    }
    auto before = variables_before.find(var);
    if (before == variables_before.end() || !same_value(before->second, v)) more.push_back(var);
  }
  st.variables().current() = variables_before;
  if (more.size() != retry.variables.size()) throw VariableRetry{token, std::move(more)};
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
// variable the body assigns; without a value before the loop, as a variable first
// assigned inside it (created_carry).
void LoopStaging::target_carries() {
  for (const std::string& name : spec.targets) {
    if (!after.count(name)) continue;
    const Value* before = sc.lookup(name);
    if (before && !before->is<UndefinedV>()) {
      if (!before->is_tensor() && !before->is_number()) continue;
      carries.push_back(tensor_carry(name, *before));
    } else {
      created_carry(name, true);
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
    if (before && before->is<DictPtr>()) added_key_carries(name, *before);
    if ((!before || before->is<UndefinedV>()) && after.count(name) && !read_in_body.count(name)) {
      created_carry(name, false);
      continue;
    }
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
      defined_flag_carry(name);
      continue;
    } else if (before->is<ListPtr>() || before->is<TensorListV>()) {
      c = list_carry(name, before);
    } else {
      c.kind = CarryKind::kStatic;
    }
    carries.push_back(std::move(c));
    defined_flag_carry(name);
  }
}

// A variable (or for target) first assigned inside the loop and read after it:
// typed by its first iteration, with a defined flag beside it that a read after the
// loop checks (where the loop may run zero times, or skips the assignment on some
// paths through an iteration).
void LoopStaging::created_carry(const std::string& name, bool target) {
  Carry c{name, CarryKind::kTarget, Value()};
  Carry flag{defined_flag(name), CarryKind::kDefined, Value(false)};
  auto known = retry.created.find(name);
  if (known != retry.created.end()) {
    // Assigned on some paths only (an earlier attempt): carried from the start, its
    // flag too, so that an iteration that skips it keeps the previous value.
    c.kind = CarryKind::kTensor;
    c.type = known->second;
    c.created = true;
    flag.created = true;
    auto a = retry.relax.find(name);
    if (a != retry.relax.end())
      for (size_t axis : a->second)
        if (axis < c.type->rank()) {
          c.type->shape[axis] = ir::Dim::symbol(m.symbols.fresh(name));
          c.relaxed.insert(axis);
          c.auto_relaxed.insert(axis);
        }
  }
  carries.push_back(std::move(c));
  if (target) carried_targets.insert(name);
  // Carried where the loop provably runs too: at the end of an iteration it says
  // whether every path assigned the variable.
  carries.push_back(std::move(flag));
  cs.unbound_why[name] = known != retry.created.end() ? "no iteration of the staged " + where + " assigned it"
                                                       : "the staged " + where + " ran zero times";
}

void LoopStaging::added_key_carries(const std::string& name, const Value& dict) {
  const auto keys = retry.dict_keys.find(name);
  if (keys == retry.dict_keys.end()) return;
  for (const auto& [key, type] : keys->second) {
    // An earlier attempt put the key in already (the dict outlives its rollback), with
    // a stand-in of that attempt's graph: a fresh one replaces it.
    const Value stand_in = unset_tensor_of_type(st, type, s.span);
    bool known = false;
    for (auto& kv : dict.as<DictPtr>()->items)
      if (static_equal(kv.first, key).value_or(false)) kv.second = stand_in, known = true;
    if (!known) dict.as<DictPtr>()->items.emplace_back(key, stand_in);
    Carry flag{dict_key_flag(name, py_repr(key)), CarryKind::kDefined, Value(false)};
    flag.created = true;  // carried from the start: an iteration that skips it keeps the flag
    carries.push_back(std::move(flag));
  }
}

// A variable that may be unbound before the loop (its defined flag is staged) and
// that the loop assigns: the flag is carried too.
void LoopStaging::defined_flag_carry(const std::string& name) {
  const Value* flag = sc.lookup(defined_flag(name));
  if (flag && flag->is<Staged>()) carries.push_back(Carry{defined_flag(name), CarryKind::kDefined, *flag});
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
    if (c.kind == CarryKind::kFlag || c.kind == CarryKind::kDefined) c.type = ir::Type{DType::kBool, {}};
}

// ---- the body -------------------------------------------------------------------

}  // namespace sg::compiler::staging::loop_detail
