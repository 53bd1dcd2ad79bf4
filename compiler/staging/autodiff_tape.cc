// Recursion through a tape of residuals (DESIGN.md #14): the adjoint of a Call
// reads what its callee's forward kept instead of recomputing that forward, which
// for a recursive function would rerun every subtree once per level above it.
//
// A differentiated Call of a function that calls others is the root of a closure:
// every (function, params, results) variant reached through its differentiated
// Calls and Ifs. Per member, and per value its backward reads from its forward
// (a residual), a tape [T, shape...] runs through every member's taped forward as
// an extra parameter and result. A member's taped forward runs its nodes (its
// Calls and Ifs call the taped forwards of their members, handing the tapes on),
// then appends one row to each of its own tapes. Its backward runs its Calls' and
// Ifs' adjoints in the reverse order of their forwards, so the backwards together
// visit the members in exactly the reverse order of the appends: each reads the
// last row of its tapes that no backward has read yet. Per member with residuals
// a counter (the rows not yet read, at first the tapes' length) runs through the
// backwards as a parameter and result; a member reads its row one below it and
// hands that on. A Call's adjoint is a Call of the callee's backward, an If's an
// If on the recomputed predicate over the branches' backwards, and no forward runs
// twice. A member's backward takes the gradients its caller has so far for the
// values it differentiates and returns them with its own added, so a branch that
// does not use a weight hands its gradient on instead of returning zeros to be
// added. sg.checkpoint functions keep recomputing; a member with a differentiated
// While, or a residual whose shape is not static, leaves the root Call to the
// recomputing adjoint.
#include "staging/autodiff.h"

#include "staging/autodiff_internal.h"

namespace sg::compiler::staging::autodiff_detail {

namespace {

const ir::Type kRowType{DType::kI64, {}};

std::vector<bool> input_mask(const ir::Function& f, const std::vector<bool>& active, const ir::Node& node,
                             size_t first) {
  std::vector<bool> mask;
  for (size_t k = first; k < node.inputs.size(); ++k) {
    const int32_t v = node.inputs[k];
    mask.push_back(active[size_t(v)] && is_float(f.values[size_t(v)].type.dtype));
  }
  return mask;
}

bool any_of(const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); }

}  // namespace

void Vjp::activity(int32_t f, const ir::Function& src, const std::vector<bool>& params,
                   const std::vector<bool>& results, std::vector<bool>& active, std::vector<bool>& useful) const {
  active.assign(src.values.size(), false);
  for (size_t k = 0; k < src.params.size(); ++k)
    if (params[k] && is_float(src.values[size_t(src.params[k])].type.dtype)) active[size_t(src.params[k])] = true;
  for (const ir::Node& node : src.nodes) {
    bool any = false;
    for (int32_t i : node.inputs) any = any || active[size_t(i)];
    if (!any) continue;
    for (int32_t o : node.outputs)
      active[size_t(o)] = is_float(src.values[size_t(o)].type.dtype) && !s_.differentiation().gradient_stopped(f, o);
  }
  useful.assign(src.values.size(), false);
  for (size_t k = 0; k < src.results.size(); ++k)
    if (results[k]) useful[size_t(src.results[k])] = true;
  for (size_t n = src.nodes.size(); n > 0; --n) {
    const ir::Node& node = src.nodes[n - 1];
    bool any = false;
    for (int32_t o : node.outputs) any = any || useful[size_t(o)];
    if (any)
      for (int32_t i : node.inputs) useful[size_t(i)] = true;
  }
}

std::optional<Closure> Vjp::discover(const Variant& root) {
  Closure c;
  std::map<Variant, size_t> index;
  bool calls = false;
  auto member = [&](const Variant& v) {
    auto [it, fresh] = index.emplace(v, c.members.size());
    if (fresh) {
      c.members.push_back(Closure::Member{});
      c.members.back().key = v;
    }
    return it->second;
  };
  member(root);
  for (size_t next = 0; next < c.members.size(); ++next) {
    const auto [f, params, results] = c.members[next].key;
    const ir::Function src = s_.module().functions[size_t(f)];
    std::vector<bool> active, useful;
    activity(f, src, params, results, active, useful);
    for (size_t n = 0; n < src.nodes.size(); ++n) {
      const ir::Node& node = src.nodes[n];
      // A loop sg.checkpoint segments would renumber the nodes the closure names.
      if (node.kind == ir::NodeKind::kWhile && !s_.differentiation().checkpoint_segments().empty()) return std::nullopt;
      bool differentiated = false;
      for (int32_t o : node.outputs) differentiated = differentiated || (active[size_t(o)] && useful[size_t(o)]);
      if (!differentiated || node.kind == ir::NodeKind::kOp) continue;
      if (node.kind == ir::NodeKind::kWhile) return std::nullopt;  // its tapes are not the closure's
      if (node.kind == ir::NodeKind::kCall) {
        const int32_t callee = node.functions[0];
        if (s_.differentiation().is_checkpoint(callee)) continue;  // recomputes, as asked
        const std::vector<bool> p = input_mask(src, active, node, 0);
        if (!any_of(p)) continue;
        calls = true;
        const size_t m = member({callee, p, reached_results(active_results(callee, p), node, useful)});
        c.members[next].children[n] = m;
        continue;
      }
      const std::vector<bool> p = input_mask(src, active, node, 1);
      if (!any_of(p)) continue;
      std::vector<bool> r = active_results(node.functions[0], p);
      const std::vector<bool> other = active_results(node.functions[1], p);
      for (size_t k = 0; k < r.size(); ++k) r[k] = r[k] || other[k];
      r = reached_results(std::move(r), node, useful);
      const size_t then_member = member({node.functions[0], p, r});
      const size_t else_member = member({node.functions[1], p, r});
      c.members[next].children[n] = then_member;
      c.members[next].else_children[n] = else_member;
    }
  }
  if (!calls) return std::nullopt;  // no Call inside: recomputing it is as cheap
  return c;
}

bool Vjp::split_core(Closure& c, size_t k, int32_t adj) {
  const Built info = built_.at(adj);
  const ir::Function a = s_.module().functions[size_t(adj)];
  std::map<int32_t, int32_t> body_of;  // adjoint value -> the member function's value
  for (size_t v = 0; v < info.map.size(); ++v)
    if (info.map[v] >= 0) body_of[info.map[v]] = int32_t(v);
  std::set<int32_t> later(a.params.begin(), a.params.end());
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n)
    for (int32_t o : a.nodes[n].outputs) later.insert(o);
  Closure::Member& m = c.members[k];
  // A forward value that cheap ops compute from parameters and constants alone (a
  // row of an input, an element of an index list, a scalar comparison of one: an
  // If's condition) is recomputed by the backward
  // rather than kept: one node instead of an append and a read.
  std::map<int32_t, size_t> defined;  // forward value -> its node
  for (size_t n = 0; n < info.forward_nodes; ++n)
    for (int32_t o : a.nodes[n].outputs) defined[o] = n;
  std::set<size_t> recompute;
  std::function<bool(int32_t)> recomputable = [&](int32_t v) {
    if (a.values[size_t(v)].constant >= 0 || std::find(a.params.begin(), a.params.end(), v) != a.params.end())
      return true;
    const auto d = defined.find(v);
    if (d == defined.end()) return false;
    const ir::Node& node = a.nodes[d->second];
    if (node.kind != ir::NodeKind::kOp) return false;
    const bool scalar = node.outputs.size() == 1 && a.values[size_t(node.outputs[0])].type.rank() == 0 &&
                        ops::has_flag(node.op, ops::kElementwiseUnary | ops::kElementwiseBinary);
    if (!cheap_to_recompute(node.op) && !scalar) return false;
    for (int32_t i : node.inputs)
      if (!recomputable(i)) return false;
    recompute.insert(d->second);
    return true;
  };
  std::vector<int32_t> residuals;  // adjoint ids
  bool ok = true;
  auto read = [&](int32_t v) {
    if (later.count(v) || a.values[size_t(v)].constant >= 0 ||
        std::find(residuals.begin(), residuals.end(), v) != residuals.end() || recomputable(v))
      return;
    const ir::Type& t = a.values[size_t(v)].type;
    for (const ir::Dim& d : t.shape) ok = ok && d.as_static().has_value();
    if (auto b = body_of.find(v); b != body_of.end()) {
      m.residuals.push_back(b->second);
    } else {
      ok = false;
    }
    residuals.push_back(v);
    m.types.push_back(t);
  };
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n)
    for (int32_t i : a.nodes[n].inputs) read(i);
  for (int32_t r : a.results) read(r);
  // The adjoint is not called by anything: empty, it stays a valid function.
  s_.module().functions[size_t(adj)].nodes.clear();
  s_.module().functions[size_t(adj)].results.clear();
  if (!ok) return false;
  std::vector<ir::Type> types;
  for (int32_t p : a.params) types.push_back(a.values[size_t(p)].type);
  for (const ir::Type& t : m.types) types.push_back(t);
  m.core = new_function(a.name + ".core", types);
  ir::Function& f = s_.module().functions[size_t(m.core)];
  std::map<int32_t, int32_t> local;
  for (size_t j = 0; j < a.params.size(); ++j) local[a.params[j]] = f.params[j];
  for (size_t j = 0; j < residuals.size(); ++j) local[residuals[j]] = f.params[a.params.size() + j];
  auto id = [&](int32_t v) {
    auto it = local.find(v);
    if (it != local.end()) return it->second;
    f.values.push_back(a.values[size_t(v)]);  // a constant, or a value defined below
    return local[v] = int32_t(f.values.size() - 1);
  };
  std::vector<size_t> order(recompute.begin(), recompute.end());
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n) order.push_back(n);
  for (size_t n : order) {
    ir::Node node = a.nodes[n];
    for (int32_t& i : node.inputs) i = id(i);
    for (int32_t& o : node.outputs) o = id(o);
    f.nodes.push_back(std::move(node));
  }
  for (int32_t r : a.results) f.results.push_back(id(r));
  return true;
}

void Vjp::taped_forward(const Closure& c, size_t k) {
  const Closure::Member& m = c.members[k];
  FnBuilder bb;
  bb.fn = m.forward;
  FnBuilder* saved = s_.builder();
  s_.set_builder(&bb);
  const size_t nt = c.tapes.size();
  std::vector<int32_t> tapes(s_.fn().params.end() - long(nt), s_.fn().params.end());
  for (const auto& [n, child] : m.children) {
    ir::Function& f = s_.fn();
    ir::Node& node = f.nodes[n];
    node.functions[0] = c.members[child].forward;
    if (node.kind == ir::NodeKind::kIf) node.functions[1] = c.members[m.else_children.at(n)].forward;
    for (size_t t = 0; t < nt; ++t) {
      node.inputs.push_back(tapes[t]);
      tapes[t] = f.add_value(c.tapes[t], "", node.span);
      f.nodes[n].outputs.push_back(tapes[t]);
    }
  }
  span_ = call_span_;
  for (size_t j = 0; j < m.residuals.size(); ++j) {
    int32_t& tape = tapes[m.first_tape + j];
    Args a;
    a.pos = {make_tuple({s_.staged(tape), expand(s_.staged(m.residuals[j]), {0})})};
    a.span = span_;
    const int32_t id = s_.materialize(s_.call_sg("concatenate", a), span_);
    s_.fn().values[size_t(id)].type = c.tapes[m.first_tape + j];
    tape = id;
  }
  s_.fn().results.insert(s_.fn().results.end(), tapes.begin(), tapes.end());
  s_.set_builder(saved);
}

void Vjp::taped_backward(Closure& c, size_t k) {
  Closure::Member& m = c.members[k];
  const ir::Function core = s_.module().functions[size_t(m.core)];
  const size_t n_a = core.params.size() - m.residuals.size();
  FnBuilder bb;
  bb.fn = m.backward;
  FnBuilder* saved = s_.builder();
  s_.set_builder(&bb);
  span_ = call_span_;
  // Parameters: the core's own, then the counters, then the tapes.
  std::vector<ir::Type> types;
  for (size_t j = 0; j < n_a; ++j) types.push_back(core.values[size_t(core.params[j])].type);
  for (size_t j = 0; j < c.counters; ++j) types.push_back(kRowType);
  for (const ir::Type& t : c.tapes) types.push_back(t);
  for (const ir::Type& t : types) s_.fn().params.push_back(s_.fn().add_value(t, "", call_span_));
  const std::vector<int32_t> params = s_.fn().params;
  std::vector<int32_t> counters(params.begin() + long(n_a), params.begin() + long(n_a + c.counters));
  const std::vector<int32_t> tapes(params.begin() + long(n_a + c.counters), params.end());
  std::vector<int32_t> args(params.begin(), params.begin() + long(n_a));
  if (m.counter != SIZE_MAX) {
    m.row = s_.materialize(sub(s_.staged(counters[m.counter]), s_.to_tensor(Value(int64_t(1)), DType::kI64, span_)),
                           span_);
    counters[m.counter] = m.row;
    for (size_t j = 0; j < m.residuals.size(); ++j)
      args.push_back(
          s_.materialize(s_.index_tensor_value(s_.staged(tapes[m.first_tape + j]), s_.staged(m.row), span_), span_));
  }
  const std::vector<int32_t> outs = inline_function(m.core, args);
  std::set<int32_t> backwards;
  for (const Closure::Member& x : c.members) backwards.insert(x.backward);
  // The counters run through the Calls and Ifs of backwards in their order.
  for (size_t n = 0; n < s_.fn().nodes.size(); ++n) {
    ir::Node& node = s_.fn().nodes[n];
    if (node.kind == ir::NodeKind::kOp || node.kind == ir::NodeKind::kWhile || !backwards.count(node.functions[0]))
      continue;
    node.inputs.insert(node.inputs.end(), counters.begin(), counters.end());
    node.inputs.insert(node.inputs.end(), tapes.begin(), tapes.end());
    for (int32_t& counter : counters) {
      counter = s_.fn().add_value(kRowType, "", span_);
      s_.fn().nodes[n].outputs.push_back(counter);
    }
  }
  s_.fn().results = outs;
  s_.fn().results.insert(s_.fn().results.end(), counters.begin(), counters.end());
  s_.set_builder(saved);
  // Inlined, the core is called by nothing (and lacks the tapes): empty, it stays valid.
  s_.module().functions[size_t(m.core)].nodes.clear();
  s_.module().functions[size_t(m.core)].results.clear();
}

const Closure* Vjp::tape_closure(const Variant& root) {
  if (auto it = closures_.find(root); it != closures_.end()) return it->second.get();
  closures_[root] = nullptr;
  std::optional<Closure> found = discover(root);
  if (!found) return nullptr;
  auto c = std::make_shared<Closure>(std::move(*found));
  ir::Module& mod = s_.module();
  for (Closure::Member& m : c->members)
    m.backward = new_function(mod.functions[size_t(std::get<0>(m.key))].name + ".backward", {});
  const SourceSpan saved_span = span_;
  for (size_t k = 0; k < c->members.size(); ++k) {
    VjpRequest r;
    r.fn = std::get<0>(c->members[k].key);
    r.diff_params = std::get<1>(c->members[k].key);
    r.ct_results = std::get<2>(c->members[k].key);
    r.keep_primal = false;
    building_ = c.get();
    building_member_ = k;
    const int32_t adj = build(r);
    if (!split_core(*c, k, adj)) {
      // The functions made so far are unreachable (dead code removes them); emptied,
      // as their Calls lack the tapes, they stay valid until then.
      for (const Closure::Member& m : c->members)
        if (m.core >= 0) {
          mod.functions[size_t(m.core)].nodes.clear();
          mod.functions[size_t(m.core)].results.clear();
        }
      span_ = saved_span;
      return nullptr;
    }
  }
  for (Closure::Member& m : c->members) {
    m.first_tape = c->tapes.size();
    if (!m.residuals.empty()) m.counter = c->counters++;
    for (ir::Type t : m.types) {
      t.shape.insert(t.shape.begin(), ir::Dim::symbol(mod.symbols.fresh("T")));
      c->tapes.push_back(t);
    }
  }
  for (Closure::Member& m : c->members) {
    const int32_t f = std::get<0>(m.key);
    m.forward = clone_with_params(f, mod.functions[size_t(f)].name + ".taped", c->tapes);
    s_.differentiation().copy_stopped_gradients(f, m.forward);
  }
  for (size_t k = 0; k < c->members.size(); ++k) {
    taped_forward(*c, k);
    taped_backward(*c, k);
  }
  defer_closure_products(*c);
  span_ = saved_span;
  closures_[root] = c;
  return c.get();
}

int32_t Vjp::empty_rows(const ir::Type& t) {
  std::vector<Value> dims{Value(int64_t(0))};
  for (size_t d = 1; d < t.shape.size(); ++d) dims.push_back(Value(*t.shape[d].as_static()));
  Args a;
  a.pos = {make_tuple(std::move(dims))};
  a.kw.emplace_back("dtype", Value(DTypeV{t.dtype}));
  a.span = span_;
  return s_.materialize(s_.call_sg("zeros", a), span_);
}

bool Vjp::taped_call(size_t index, const ir::Node& node) {
  const int32_t callee = node.functions[0];
  if (s_.differentiation().is_checkpoint(callee)) return false;
  const std::vector<bool> params = active_inputs(node, 0);
  if (!any_of(params)) return false;
  const Closure* c = tape_closure({callee, params, reached_results(active_results(callee, params), node, w_->useful)});
  if (c == nullptr) return false;
  span_ = node.span;
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  for (const ir::Type& t : c->tapes) inputs.push_back(empty_rows(t));
  std::vector<ir::Type> types;
  for (int32_t o : node.outputs) types.push_back(w_->src.values[size_t(o)].type);
  for (const ir::Type& t : c->tapes) types.push_back(t);
  const std::vector<int32_t> outs = emit(ir::NodeKind::kCall, {c->members[0].forward}, inputs, types);
  for (size_t j = 0; j < node.outputs.size(); ++j) w_->map[size_t(node.outputs[j])] = outs[j];
  Work::TapedCall tc;
  tc.closure = c;
  tc.tapes.assign(outs.begin() + long(node.outputs.size()), outs.end());
  for (int32_t t : tc.tapes) s_.fn().values[size_t(t)].name = "gradient tape";  // graph-run --profile reports them
  w_->taped_calls[index] = std::move(tc);
  return true;
}

bool Vjp::backward_taped(size_t index, const ir::Node& node, const std::vector<int32_t>& inputs,
                         const std::vector<ir::Type>& types, const std::vector<int32_t>& grads_for) {
  const Work::TapedCall* root = nullptr;
  if (auto it = w_->taped_calls.find(index); it != w_->taped_calls.end()) root = &it->second;
  const Closure::Member* m = w_->closure != nullptr ? &w_->closure->members[w_->member] : nullptr;
  auto child = m != nullptr ? m->children.find(index) : std::map<size_t, size_t>::const_iterator{};
  if (root == nullptr && (m == nullptr || child == m->children.end())) return false;
  std::vector<int32_t> in = inputs;
  std::vector<bool> handed;  // per gradient: the callee adds to what this value had
  std::set<int32_t> seen;
  for (int32_t v : grads_for) {
    const std::optional<Value> so_far = ct_of(v);
    handed.push_back(so_far && seen.insert(v).second);
    in.push_back(s_.materialize(handed.back() ? *so_far : zeros_like(fwd(v)), span_));
  }
  std::vector<int32_t> outs;
  if (root != nullptr) {
    std::vector<ir::Type> all = types;
    for (const Closure::Member& x : root->closure->members)  // every row is still to read
      if (x.counter != SIZE_MAX) {
        in.push_back(s_.materialize(
            s_.to_tensor(s_.shape_item(s_.staged(root->tapes[x.first_tape]), 0, span_), DType::kI64, span_), span_));
        all.push_back(kRowType);
      }
    in.insert(in.end(), root->tapes.begin(), root->tapes.end());
    for (const ir::Type& t : root->closure->row_lists) {
      in.push_back(empty_rows(t));
      all.push_back(t);
    }
    outs = emit(ir::NodeKind::kCall, {root->closure->members[0].backward}, in, all);
    for (const Closure::DeferredRows& d : root->closure->deferred) {
      const size_t lists = types.size() + root->closure->counters;
      const int32_t b = outs[lists + d.rows_b];
      Value total;
      if (d.tape != Closure::kNoRows) {  // the tape's rows against Q's, reversed
        Args a;
        a.pos = {s_.staged(b)};
        a.kw.emplace_back("axis", Value(int64_t(0)));
        a.span = span_;
        total = finish_deferred(s_.staged(outs[d.slot]), root->tapes[d.tape],
                                s_.materialize(s_.call_sg("flip", a), span_));
      } else if (d.rows_a == Closure::kNoRows) {
        total = add(s_.staged(outs[d.slot]), sum(s_.staged(b), {0}, false));
      } else {
        total = finish_deferred(s_.staged(outs[d.slot]), outs[lists + d.rows_a], b);
      }
      outs[d.slot] = s_.materialize(total, span_);
    }
    outs.resize(types.size());
  } else {
    // The counters and tapes follow when the backward is assembled (taped_backward).
    std::vector<int32_t> fns{w_->closure->members[child->second].backward};
    if (node.kind == ir::NodeKind::kIf) fns.push_back(w_->closure->members[m->else_children.at(index)].backward);
    outs = emit(node.kind, fns, in, types);
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (handed[k]) w_->ct.insert_or_assign(grads_for[k], s_.staged(outs[k]));
    else accumulate(grads_for[k], s_.staged(outs[k]));
  }
  return true;
}

}  // namespace sg::compiler::staging::autodiff_detail
