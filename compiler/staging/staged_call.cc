// Calls through Call nodes (SPEC.md §6): specialisations of recursive functions
// and @sg.function helpers, result-type inference, widening (staged_call.h).
#include "staging/staged_call.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "staging/control_state.h"
#include "staging/sg_variables.h"
#include "staging/staged_if.h"
#include "staging/staged_loop.h"

namespace sg::compiler::staging {
namespace {

// Passes of one specialisation before inference gives up.
constexpr int kMaxPasses = 16;

bool holds_staged(const Value& v) {
  if (v.is<Staged>() || v.is<TensorListV>()) return true;
  if (v.is<TuplePtr>()) {
    for (const Value& item : *v.as<TuplePtr>())
      if (holds_staged(item)) return true;
  }
  if (v.is<ListPtr>()) {
    for (const Value& item : v.as<ListPtr>()->items)
      if (holds_staged(item)) return true;
  }
  if (v.is<DictPtr>()) {
    for (const auto& kv : v.as<DictPtr>()->items)
      if (holds_staged(kv.second)) return true;
  }
  if (v.is<InstancePtr>()) return holds_staged(Value(v.as<InstancePtr>()->attrs));
  if (v.is<BoundFunction>()) return holds_staged(*v.as<BoundFunction>().self);
  return false;
}

std::string pointer_key(const void* p) { return std::to_string(reinterpret_cast<uintptr_t>(p)); }

// Restores the stager's current function, activation and depth after a pass.
struct PassGuard {
  FnBuilder*& cur;
  CallFrame*& frame;
  int& depth;
  FnBuilder* saved_cur;
  CallFrame* saved_frame;
  int saved_depth;
  PassGuard(FnBuilder*& c, CallFrame*& f, int& d)
      : cur(c), frame(f), depth(d), saved_cur(c), saved_frame(f), saved_depth(d) {}
  ~PassGuard() {
    cur = saved_cur;
    frame = saved_frame;
    depth = saved_depth;
  }
};

struct SpeculationGuard {
  int& count;
  bool on;
  SpeculationGuard(int& c, bool speculate) : count(c), on(speculate) { count += on; }
  ~SpeculationGuard() { count -= on; }
};

[[noreturn]] void cannot_infer(Stager& s, const FunctionDef& def, const std::string& why) {
  s.fail(def.name_span, "cannot infer the result type of '" + def.name + "', which is recursive: " + why +
                            "; add a return annotation, e.g. `def " + def.name +
                            "(...) -> sg.f32[\"N\"]:` (a tuple of them for several results)");
}

}  // namespace

Calls::Calls(Stager& s, const Module& ast) : s_(s), ast_(ast) {}
Calls::~Calls() = default;

GraphCalls& Calls::graph_calls() {
  if (!graph_calls_) graph_calls_ = std::make_unique<GraphCalls>(ast_);
  return *graph_calls_;
}

size_t Calls::specialisations() const { return graph_calls_ ? graph_calls_->specs.size() : 0; }

void Calls::drop_specialisations(size_t specs) {
  if (graph_calls_) graph_calls_->specs.resize(specs);
}

bool Calls::wants_graph_function(const FunctionV& f, const Scope& bound) {
  bool staged = false;
  for (const auto& [name, v] : bound.vars()) staged = staged || holds_staged(v);
  if (!staged) return false;
  if (f.is_entry) return true;
  return graph_calls().graph.on_cycle(f.def);
}

Value Calls::call_graph_function(const std::shared_ptr<FunctionV>& f, const Scope& bound, SourceSpan span) {
  return graph_calls().call(s_, f, bound, span);
}

GraphCalls::Snapshot GraphCalls::snapshot(Stager& s) const {
  return Snapshot{s.module_->functions.size(), s.module_->constants.size(), specs.size(),
                  s.diags_.diagnostics().size(), s.held_output_.size(), s.branches().pending(),
                  s.control().zero_trip_warned};
}

void GraphCalls::rollback(Stager& s, const Snapshot& snap, bool keep_diagnostics) {
  s.forget_functions(snap.functions, snap.constants);
  specs.resize(snap.specs);
  if (!keep_diagnostics) s.diags_.truncate(snap.diagnostics);
  s.held_output_.resize(snap.output);
  // A pass rolled back leaves nothing pending: only the pass that stays counts.
  // Otherwise the probe of a nested specialisation (left pending on its own
  // recursive call, then staged again with an assumption) would make every
  // enclosing pass look incomplete, and each enclosing specialisation would be
  // staged again, nested ones included: a cost exponential in the chain of
  // specialisations (rec(min(v + 1, K), d - 1) from a static v).
  s.branches().set_pending(snap.pending_branches);
  s.control().zero_trip_warned = snap.zero_trip_warned;
}

namespace {

// Drops the entries of a map or set keyed by (function, value) from function
// `first` on: they sort last, so this costs what it drops, not a scan (a
// recursion through thousands of specialisations rolls back once per level).
template <class M>
void drop_from_function(M& m, size_t first) {
  m.erase(m.lower_bound(std::pair<int32_t, int32_t>{int32_t(first), INT32_MIN}), m.end());
}

}  // namespace

void Calls::name_entry(int32_t fn, const std::string& name) {
  taken_names_.insert(name);
  name_of_function_[fn] = CalledName{name, name, 0};
}

std::string Calls::name_specialisation(int32_t fn, const std::string& base) {
  int64_t& first = first_free_suffix_[base];
  const auto named = [&](int64_t k) { return k == 0 ? base : base + "." + std::to_string(k); };
  while (taken_names_.count(named(first))) ++first;
  const std::string name = named(first);
  taken_names_.insert(name);
  name_of_function_[fn] = CalledName{name, base, first};
  ++first;
  return name;
}

void Calls::forget_names(size_t functions) {
  for (auto it = name_of_function_.lower_bound(int32_t(functions)); it != name_of_function_.end();) {
    const CalledName& n = it->second;
    taken_names_.erase(n.name);
    int64_t& first = first_free_suffix_[n.base];
    first = std::min(first, n.suffix);
    it = name_of_function_.erase(it);
  }
}

void Stager::forget_functions(size_t functions, size_t constants) {
  calls().forget_names(functions);
  module_->functions.resize(functions);
  if (module_->constants.size() > constants) {
    module_->constants.resize(constants);
    std::erase_if(constant_index_, [&](const auto& kv) { return size_t(kv.second) >= constants; });
  }
  drop_from_function(origins_, functions);
  drop_from_function(reduced_, functions);
  loops().forget_functions(functions);
  // Marks on values of the dropped functions must not fall on the functions
  // that take their ids next.
  ControlState& cs = control();
  drop_from_function(cs.relaxed, functions);
  drop_from_function(cs.unset_values, functions);
  std::erase_if(cs.zero_trip_dims, [&](const auto& kv) { return size_t(kv.second.fn) >= functions; });
}

Stager::Checkpoint Stager::checkpoint() {
  Checkpoint c;
  c.functions = module_->functions.size();
  c.constants = module_->constants.size();
  c.specs = calls().specialisations();
  c.diagnostics = diags_.diagnostics().size();
  c.output = held_output_.size();
  c.pending_branches = branches().pending();
  c.control = std::make_shared<const ControlState>(control());
  c.vars = scope().vars();
  c.variable_current = variables().current();
  c.builder = cur_;
  if (cur_) {
    const ir::Function& f = fn();
    c.values = f.values.size();
    c.params = f.params.size();
    c.results = f.results.size();
    c.nodes = f.nodes.size();
    c.builder_state = *cur_;
  }
  return c;
}

void Stager::rollback(const Checkpoint& c) {
  forget_functions(c.functions, c.constants);
  calls().drop_specialisations(c.specs);
  diags_.truncate(c.diagnostics);
  held_output_.resize(c.output);
  branches().set_pending(c.pending_branches);
  *control_ = *c.control;
  scope().vars() = c.vars;
  variables().current() = c.variable_current;
  cur_ = c.builder;
  if (cur_ && c.builder_state) {
    // What was added to the current function since: its values, the nodes
    // that made them, and every record of them.
    const int32_t id = cur_->fn;
    ir::Function& f = fn();
    f.values.resize(c.values);
    f.params.resize(c.params);
    f.results.resize(c.results);
    f.nodes.resize(c.nodes);
    *cur_ = *c.builder_state;
    const auto added = [&](const std::pair<int32_t, int32_t>& key) {
      return key.first == id && size_t(key.second) >= c.values;
    };
    std::erase_if(origins_, [&](const auto& kv) { return added(kv.first); });
    std::erase_if(reduced_, [&](const auto& kv) { return added(kv.first); });
    loops().forget_values(id, c.values);
    // A variable first read since has lost its parameter with the entry's values.
    variables().forget_params(cur_, c.values);
  }
}

CallArgs GraphCalls::flatten(Stager& s, const std::shared_ptr<FunctionV>& f, const Scope& bound, SourceSpan span) {
  const FunctionDef& def = *f->def;
  CallArgs out;
  out.family = pointer_key(&def) + "@" + pointer_key(f->closure.get());
  std::function<void(const Value&, const std::string&, bool)> add = [&](const Value& v, const std::string& name,
                                                                         bool capture) {
    std::string& key = out.family;
    if (v.is<Staged>()) {
      const ir::Type t = s.tensor_type(v);
      key += std::string("T") + dtype_name(t.dtype) + "/" + std::to_string(t.rank()) + ";";
      out.leaves.push_back(Staged{v.as<Staged>().fn, v.as<Staged>().id, std::nullopt});
      out.leaf_names.push_back(name);
      if (capture) out.captures.push_back(out.leaves.back());
      return;
    }
    if (v.is<TensorListV>())
      s.fail(span, "'" + name + "' is a list appended to in a staged loop; stack it with sg.stack before passing it to '" +
                       def.name + "', which is compiled as a graph function");
    if (v.is<StaticTensorPtr>()) {
      const StaticTensor& t = *v.as<StaticTensorPtr>();
      const std::string_view bytes(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
      key += std::string("S") + dtype_name(t.dtype) + ops::shape_to_string(t.shape) + (t.splat ? "s" : "d") +
             std::to_string(std::hash<std::string_view>{}(bytes)) + ";";
      return;
    }
    if (v.is<TuplePtr>()) {
      key += "(";
      const auto& items = *v.as<TuplePtr>();
      for (size_t i = 0; i < items.size(); ++i) add(items[i], name + "[" + std::to_string(i) + "]", capture);
      key += ");";
      return;
    }
    if (v.is<ListPtr>() || v.is<DictPtr>()) {
      if (holds_staged(v))
        s.fail(span, "'" + name + "' is a " + type_name(v) + " holding values known only at run time; '" + def.name +
                         "' is compiled as a graph function, whose arguments are tensors, numbers and tuples: pass a "
                         "tuple or a tensor (sg.stack)");
      key += type_name(v) + ":" + py_repr(v) + ";";
      return;
    }
    if (v.is<std::shared_ptr<FunctionV>>()) {
      key += "F" + pointer_key(v.as<std::shared_ptr<FunctionV>>().get()) + ";";
      return;
    }
    if (v.is<BoundMethod>()) {
      key += "M" + v.as<BoundMethod>().name + ":";
      add(*v.as<BoundMethod>().self, name, capture);
      return;
    }
    if (v.is<InstancePtr>()) {
      // An instance passes its attributes: the staged ones are arguments of the call.
      const InstanceObj& obj = *v.as<InstancePtr>();
      key += "O" + pointer_key(obj.cls.get()) + "{";
      for (const auto& [k, item] : obj.attrs->items) {
        key += py_str(k) + "=";
        add(item, name + "." + py_str(k), capture);
      }
      key += "};";
      return;
    }
    if (v.is<UndefinedV>()) return;
    key += type_name(v) + ":" + py_repr(v) + ";";
  };
  for (const Param& p : def.params) {
    const Value* v = bound.find_local(p.name);
    if (v) add(*v, p.name, false);
  }
  // Values of enclosing functions that the body (or a function it calls) reads
  // by name become extra parameters. The module scope holds only static values.
  out.family += "|";
  for (const std::string& name : graph.names_reached(&def)) {
    bool is_param = false;
    for (const Param& p : def.params) is_param = is_param || p.name == name;
    if (is_param) continue;
    for (const Scope* sc = f->closure.get(); sc && sc != s.globals_.get(); sc = sc->parent().get()) {
      const Value* v = sc->find_local(name);
      if (!v) continue;
      out.family += name + "=";
      add(*v, name, true);
      break;
    }
  }
  return out;
}

std::optional<size_t> GraphCalls::find(const std::string& family, const std::vector<ir::Type>& types) const {
  const size_t hash = std::hash<std::string>{}(family);
  for (size_t i = 0; i < specs.size(); ++i) {
    const Specialisation& sp = specs[i];
    if (sp.family_hash != hash || sp.family != family) continue;
    bool match = true;
    for (size_t k = 0; match && k < types.size(); ++k)
      for (size_t d = 0; match && d < types[k].rank(); ++d) {
        const ir::Dim& want = sp.param_types[k].shape[d];
        const std::optional<int32_t> sym = want.as_symbol();
        match = want == types[k].shape[d] || (sym && sp.widened.count(*sym));
      }
    if (match) return i;
  }
  return std::nullopt;
}

Value GraphCalls::call(Stager& s, const std::shared_ptr<FunctionV>& f, const Scope& bound, SourceSpan span) {
  const CallArgs args = flatten(s, f, bound, span);
  std::vector<ir::Type> types;
  for (const Staged& leaf : args.leaves) types.push_back(s.tensor_type(Value(leaf)));
  std::optional<size_t> idx = find(args.family, types);
  if (!idx) {
    // A recursive call whose shapes differ from the specialisation being
    // staged: the differing dims become symbolic and that specialisation starts over.
    for (size_t i = specs.size(); i-- > 0;) {
      Specialisation& sp = specs[i];
      if (sp.family != args.family || !sp.in_progress) continue;
      for (size_t k = 0; k < types.size(); ++k)
        for (size_t d = 0; d < types[k].rank(); ++d) {
          ir::Dim& have = sp.param_types[k].shape[d];
          if (have == types[k].shape[d]) continue;
          const std::optional<int32_t> sym = have.as_symbol();
          if (sym && sp.widened.count(*sym)) continue;
          const int32_t fresh = s.module().symbols.fresh(args.leaf_names[k]);
          have = ir::Dim::symbol(fresh);
          sp.widened.insert(fresh);
        }
      throw WidenRestart{i};
    }
    Specialisation sp;
    sp.def = f->def;
    sp.family = args.family;
    sp.family_hash = std::hash<std::string>{}(args.family);
    sp.param_types = types;
    const Settled* known = nullptr;
    if (auto it = settled.find(args.family); it != settled.end())
      for (const Settled& k : it->second)
        if (k.call_types == types) known = &k;
    if (known) {
      sp.param_types = known->param_types;
      sp.widened = known->widened;
    }
    specs.push_back(std::move(sp));
    idx = specs.size() - 1;
    stage(s, *idx, f, bound, args, span, known);
    Specialisation& done = specs[*idx];
    if (!known && done.relies_on == Specialisation::kNone)
      settled[args.family].push_back(Settled{types, done.param_types, done.widened, done.result});
  }
  Specialisation& sp = specs[*idx];
  if (!sp.in_progress) {
    if (sp.relies_on != Specialisation::kNone) rely_on(sp.relies_on);
    return emit_call(s, *idx, args, sp.result, span);
  }
  for (size_t pos = active.size(); pos-- > 0;)
    if (active[pos] == *idx) {
      rely_on(pos);
      break;
    }
  if (!sp.assumed) throw PendingResult{*idx};  // only in the probe of `sp`
  sp.assumed_used = true;
  return emit_call(s, *idx, args, *sp.assumed, span);
}

void GraphCalls::rely_on(size_t pos) {
  for (size_t q = pos + 1; q < active.size(); ++q) {
    size_t& r = specs[active[q]].relies_on;
    r = std::min(r, pos);
  }
}

void GraphCalls::stage(Stager& s, size_t idx, const std::shared_ptr<FunctionV>& f, const Scope& bound,
                       const CallArgs& args, SourceSpan span, const Settled* known) {
  const FunctionDef& def = *f->def;
  // `known` points into `settled`, which grows while this stages: copied.
  const std::optional<ResultSig> settled_result = known ? std::optional<ResultSig>(known->result) : std::nullopt;
  active.push_back(idx);
  struct Pop {
    std::vector<size_t>& active;
    ~Pop() { active.pop_back(); }
  } pop{active};
  Snapshot before = snapshot(s);
  before.specs = idx;
  // Inside another function's probe, a path of this one that waits on that
  // function is the probe's business: it may take another path.
  const bool nested_in_probe = s.calls().probing();
  try {
    const std::optional<ResultSig> annotated = annotation(s, def, f->closure);
    specs[idx].in_progress = true;
    // Without an annotation the first pass is the probe (no assumption yet),
    // unless the result is known from a staging rolled back since.
    std::optional<ResultSig> assumed = annotated ? annotated : settled_result;
    bool speculating = !annotated;  // diagnostics held back: the pass may be abandoned
    for (int passes = 1;; ++passes) {
      if (passes > kMaxPasses) cannot_infer(s, def, "the types its return paths give do not settle");
      const Snapshot snap = snapshot(s);
      const int64_t pending_before = s.branches().pending();
      const bool probe = !assumed;
      specs[idx].assumed = assumed;
      specs[idx].assumed_used = false;
      specs[idx].relies_on = Specialisation::kNone;
      std::optional<ResultSig> result;
      try {
        SpeculationGuard held(s.calls().speculative_, speculating);
        SpeculationGuard probing(s.calls().probing_, probe);
        s.count_specialisation_pass(span);
        result = pass(s, idx, f, bound, args, span);
      } catch (PendingResult&) {
        // Every path of the probe waits on a recursive call.
        rollback(s, snap);
        if (nested_in_probe) throw;
        cannot_infer(s, def, "every path to a return goes through a recursive call");
      } catch (WidenRestart& w) {
        if (w.spec != idx) throw;
        rollback(s, snap);
        continue;
      } catch (StageAbort&) {
        if (!speculating || s.limit_exceeded_) throw;
        rollback(s, snap);
        // A base case that returns a Python int may stand for a float (its
        // dtype gives way to a tensor's where the paths join): try that.
        if (!probe && !annotated && promote_weak(*assumed)) continue;
        // Otherwise the error is real (the paths staged are real ones): the
        // same pass again, diagnostics on, reports it.
        speculating = false;
        continue;
      }
      // A pass that left no branch pending staged every path for real; it is
      // final when no assumption of this specialisation was used or the one used
      // holds. Staging it again (as a check, or with diagnostics on: warnings
      // and output are recorded in speculation too) would repeat every nested
      // specialisation's passes, a cost exponential in the depth of recursion
      // through static arguments (f(x, 20) calling f(x, 19), ...).
      const bool complete = s.branches().pending() == pending_before;
      if (probe && complete) {
        specs[idx].result = *result;
        break;
      }
      if (probe) {
        rollback(s, snap);
        assumed = hypothesis(s, *result, parameter_symbols(idx), def.name);
        speculating = true;
        continue;
      }
      if (annotated) {
        if (!fits(*result, *annotated))
          s.fail(def.returns->span, "'" + def.name + "' returns " + format(s, *result) +
                                        " but its return annotation says " + format(s, *annotated));
      } else if (specs[idx].assumed_used && !bears_out(*result, *assumed, parameter_symbols(idx))) {
        rollback(s, snap);
        std::optional<ResultSig> joined = join(s, *assumed, *result, def.name);
        assumed = hypothesis(s, joined ? *joined : *result, parameter_symbols(idx), def.name);
        speculating = true;
        continue;
      }
      if (speculating && !complete) {
        // The assumption holds, but a branch waited on another function's
        // probe: stage once more with diagnostics on.
        rollback(s, snap);
        speculating = false;
        continue;
      }
      specs[idx].result = *result;
      break;
    }
    specs[idx].in_progress = false;
    specs[idx].assumed.reset();
  } catch (StageAbort&) {
    rollback(s, before, /*keep_diagnostics=*/true);  // the error just reported
    throw;
  } catch (PendingResult&) {
    rollback(s, before);
    throw;
  }
}

ResultSig GraphCalls::pass(Stager& s, size_t idx, const std::shared_ptr<FunctionV>& f, const Scope& bound,
                           const CallArgs& args, SourceSpan span) {
  const FunctionDef& def = *f->def;
  if (s.call_depth_ >= s.max_compile_time_depth()) {
    // Reported at once, speculating or not, and no pass above retries: each
    // retry would descend as deep again.
    const std::string message = "recursion of '" + def.name + "' goes deeper than " +
                                std::to_string(s.max_compile_time_depth()) +
                                " calls at compile time (each call with different static arguments is a new "
                                "specialisation)";
    s.limit_exceeded_ = true;
    if (s.calls().speculative()) s.diags_.error(span, message);
    s.fail(span, message);
  }
  // Named after the function; later specialisations (and an entry point of the
  // same name) make it name.1, name.2, ...
  s.module_->functions.push_back(ir::Function{});
  const int32_t fn_id = int32_t(s.module_->functions.size() - 1);
  s.module_->functions.back().name = s.calls().name_specialisation(fn_id, def.name);
  specs[idx].fn = fn_id;

  FnBuilder builder;
  builder.fn = fn_id;
  std::vector<int32_t> params;
  for (size_t i = 0; i < args.leaves.size(); ++i) {
    const int32_t id = s.module_->functions[size_t(fn_id)].add_value(specs[idx].param_types[i], args.leaf_names[i], span);
    s.module_->functions[size_t(fn_id)].params.push_back(id);
    params.push_back(id);
    s.set_origin(fn_id, id, Origin{def.name_span, "parameter '" + args.leaf_names[i] + "' of '" + def.name + "' is"});
  }
  // Captured values of enclosing functions read inside resolve to parameters.
  const size_t first_capture = args.leaves.size() - args.captures.size();
  for (size_t i = first_capture; i < args.leaves.size(); ++i)
    builder.imported[{args.leaves[i].fn, args.leaves[i].id}] = params[i];

  PassGuard guard(s.cur_, s.frame_, s.call_depth_);
  s.cur_ = &builder;
  auto scope_ptr = std::make_shared<Scope>(f->closure);
  size_t next = 0;
  std::vector<std::pair<InstancePtr, std::vector<std::pair<Value, Value>>>> instances;
  std::function<Value(const Value&)> rebind = [&](const Value& v) -> Value {
    if (v.is<Staged>()) return s.staged(params[next++]);
    if (v.is<TuplePtr>()) {
      std::vector<Value> items;
      for (const Value& item : *v.as<TuplePtr>()) items.push_back(rebind(item));
      return make_tuple(std::move(items));
    }
    if (v.is<BoundMethod>()) return Value(BoundMethod{v.as<BoundMethod>().name, std::make_shared<Value>(rebind(*v.as<BoundMethod>().self))});
    if (v.is<InstancePtr>()) {
      // A copy whose staged attributes are the function's parameters.
      auto copy = std::make_shared<InstanceObj>(*v.as<InstancePtr>());
      copy->attrs = std::make_shared<DictObj>(*copy->attrs);
      for (auto& kv : copy->attrs->items) kv.second = rebind(kv.second);
      instances.emplace_back(copy, copy->attrs->items);
      return Value(copy);
    }
    return v;
  };
  for (const Param& p : def.params)
    if (const Value* v = bound.find_local(p.name)) scope_ptr->set(p.name, rebind(*v));
  if (const Value* cls = bound.find_local("$class")) {
    scope_ptr->set("$class", *cls);
    scope_ptr->set("$self", *scope_ptr->find_local(def.params[0].name));
  }

  CallFrame frame{scope_ptr, Value()};
  s.frame_ = &frame;
  ++s.call_depth_;
  s.exec_block(def.body);
  // The function's attributes are copies: a change would not reach the caller.
  for (const auto& [obj, items] : instances) {
    bool same = obj->attrs->items.size() == items.size();
    for (size_t i = 0; same && i < items.size(); ++i)
      same = static_equal(items[i].first, obj->attrs->items[i].first).value_or(false) &&
             items[i].second.data.index() == obj->attrs->items[i].second.data.index() &&
             (!items[i].second.is<Staged>() || (items[i].second.as<Staged>().id == obj->attrs->items[i].second.as<Staged>().id &&
                                                 items[i].second.as<Staged>().fn == obj->attrs->items[i].second.as<Staged>().fn));
    if (!same)
      s.fail(def.name_span, "'" + def.name + "' is compiled as a graph function (it is recursive) and assigns an "
                            "attribute of a '" + obj->cls->name + "' instance; such a method may read attributes "
                            "but not assign them: return the new values instead");
  }
  return materialize_result(s, s.frame_result(def, span), def);
}

Value GraphCalls::emit_call(Stager& s, size_t idx, const CallArgs& args, const ResultSig& result, SourceSpan span) {
  const Specialisation& sp = specs[idx];
  ir::Node node;
  node.kind = ir::NodeKind::kCall;
  node.functions = {sp.fn};
  node.span = span;
  // The callee's symbolic parameter dims stand for this call's argument dims;
  // its other symbols are fresh at each call.
  std::map<int32_t, ir::Dim> dims;
  for (size_t i = 0; i < args.leaves.size(); ++i) {
    const int32_t id = s.materialize(Value(args.leaves[i]), span);
    node.inputs.push_back(id);
    const ir::Type& have = s.fn().values[size_t(id)].type;
    for (size_t d = 0; d < have.rank(); ++d)
      if (std::optional<int32_t> sym = sp.param_types[i].shape[d].as_symbol()) dims.emplace(*sym, have.shape[d]);
  }
  auto substitute = [&](const ir::Dim& d) -> ir::Dim {
    if (d.is_static()) return d;
    ir::Dim out(d.constant());
    for (const ir::Dim::Term& t : d.terms()) {
      ir::Dim term(t.coef);
      for (int32_t sym : t.symbols) {
        auto it = dims.find(sym);
        if (it == dims.end()) it = dims.emplace(sym, ir::Dim::symbol(s.module().symbols.fresh(s.module().symbols.name(sym)))).first;
        term = term * it->second;
      }
      out = out + term;
    }
    return out;
  };
  std::function<Value(const ResultSig&)> build = [&](const ResultSig& r) -> Value {
    switch (r.kind) {
      case ResultSig::Kind::kNone: return Value();
      case ResultSig::Kind::kTensor: {
        ir::Type t = r.type;
        for (ir::Dim& d : t.shape) d = substitute(d);
        const int32_t id = s.fn().add_value(std::move(t), "", span);
        node.outputs.push_back(id);
        s.set_origin(s.cur_->fn, id, Origin{span, "the call of '" + sp.def->name + "' produced"});
        // A result that is a Python number on every path is one at the call too:
        // beside a tensor it takes the tensor's dtype, as in eager mode.
        if (r.weak && (is_int(r.type.dtype) || is_float(r.type.dtype)) && r.type.rank() == 0)
          s.loops().mark_weak(s.staged(id), WeakOrigin::of_number(is_float(r.type.dtype) ? Value(0.0) : Value(int64_t(0))));
        return s.staged(id);
      }
      case ResultSig::Kind::kTuple: {
        std::vector<Value> items;
        for (const ResultSig& item : r.items) items.push_back(build(item));
        return make_tuple(std::move(items));
      }
    }
    return Value();
  };
  Value out = build(result);
  s.fn().nodes.push_back(std::move(node));
  return out;
}

}  // namespace sg::compiler::staging
