// Reverse-mode differentiation of staged graph functions: see autodiff.h.
#include "staging/autodiff.h"

#include "staging/autodiff_internal.h"

namespace sg::compiler::staging::autodiff_detail {
[[noreturn]] void Vjp::refuse(const std::string& what) {
  s_.fail(span_.valid() ? span_ : call_span_, "cannot differentiate " + what);
}

int32_t Vjp::new_function(const std::string& name, const std::vector<ir::Type>& types) {
  ir::Module& m = s_.module();
  m.functions.push_back(ir::Function{});
  const int32_t id = int32_t(m.functions.size() - 1);
  m.functions.back().name = name + "#" + std::to_string(id);
  for (const ir::Type& t : types) {
    const int32_t v = m.functions.back().add_value(t, "", call_span_);
    m.functions.back().params.push_back(v);
  }
  return id;
}

int32_t Vjp::clone_with_params(int32_t f, const std::string& name, const std::vector<ir::Type>& extra) {
  ir::Module& m = s_.module();
  ir::Function copy = m.functions[size_t(f)];
  copy.name = name;
  for (const ir::Type& t : extra) copy.params.push_back(copy.add_value(t, "", call_span_));
  m.functions.push_back(std::move(copy));
  const int32_t id = int32_t(m.functions.size() - 1);
  m.functions.back().name += "#" + std::to_string(id);
  return id;
}

std::vector<int32_t> Vjp::emit(ir::NodeKind kind, std::vector<int32_t> fns, std::vector<int32_t> inputs,
                               const std::vector<ir::Type>& types) {
  ir::Node node;
  node.kind = kind;
  node.functions = std::move(fns);
  node.inputs = std::move(inputs);
  node.span = span_;
  for (const ir::Type& t : types) node.outputs.push_back(s_.fn().add_value(t, "", span_));
  std::vector<int32_t> out = node.outputs;
  s_.fn().nodes.push_back(std::move(node));
  return out;
}

std::vector<int32_t> Vjp::inline_function(int32_t f, const std::vector<int32_t>& args, bool checkpoints) {
  const ir::Function src = s_.module().functions[size_t(f)];
  std::vector<int32_t> map(src.values.size(), -1);
  for (size_t k = 0; k < src.params.size(); ++k) map[size_t(src.params[k])] = args[k];
  auto id = [&](int32_t v) {
    if (map[size_t(v)] < 0) {  // a constant, or a value defined below
      s_.fn().values.push_back(src.values[size_t(v)]);
      map[size_t(v)] = int32_t(s_.fn().values.size() - 1);
    }
    return map[size_t(v)];
  };
  for (ir::Node node : src.nodes) {
    for (int32_t& i : node.inputs) i = id(i);
    if (checkpoints && node.kind == ir::NodeKind::kCall && s_.differentiation().is_checkpoint(node.functions[0])) {
      const std::vector<int32_t> outs = inline_function(node.functions[0], node.inputs, true);
      for (size_t k = 0; k < outs.size(); ++k) map[size_t(node.outputs[k])] = outs[k];
      continue;
    }
    for (int32_t& o : node.outputs) {
      const int32_t from = o;
      o = id(o);
      if (s_.differentiation().gradient_stopped(f, from)) s_.differentiation().stop_gradient_at(s_.builder()->fn, o);
    }
    s_.fn().nodes.push_back(std::move(node));
  }
  std::vector<int32_t> out;
  for (int32_t r : src.results) out.push_back(id(r));
  return out;
}

int32_t Vjp::remap(int32_t id) {
  int32_t& slot = w_->map[size_t(id)];
  if (slot >= 0) return slot;
  const ir::Value& v = w_->src.values[size_t(id)];
  if (v.constant < 0)
    s_.fail(call_span_, "internal error: differentiating '" + w_->src.name + "' met value " + std::to_string(id) +
                            " before its definition");
  s_.fn().values.push_back(v);
  slot = int32_t(s_.fn().values.size() - 1);
  return slot;
}

void Vjp::accumulate(int32_t src_id, const Value& g) {
  auto it = w_->ct.find(src_id);
  if (it == w_->ct.end()) {
    w_->ct.emplace(src_id, g);
    return;
  }
  it->second = add(it->second, g);
}

void Vjp::copy_forward(size_t index, const ir::Node& node) {
  (void)index;
  ir::Node copy = node;
  for (int32_t& i : copy.inputs) i = remap(i);
  for (int32_t& o : copy.outputs) {
    const int32_t id = s_.fn().add_value(w_->src.values[size_t(o)].type, w_->src.values[size_t(o)].name,
                                         w_->src.values[size_t(o)].span);
    w_->map[size_t(o)] = id;
    o = id;
  }
  s_.fn().nodes.push_back(std::move(copy));
}

std::optional<Vjp::Split> Vjp::split_backward(int32_t adj, int32_t body) {
  const Built info = built_.at(adj);
  const ir::Function a = s_.module().functions[size_t(adj)];
  const ir::Function& b = s_.module().functions[size_t(body)];
  for (size_t n = 0; n < info.forward_nodes; ++n)
    if (a.nodes[n].kind == ir::NodeKind::kWhile || a.nodes[n].kind == ir::NodeKind::kCall) return std::nullopt;
  std::map<int32_t, int32_t> body_of;  // adjoint value -> body value
  for (size_t v = 0; v < info.map.size(); ++v)
    if (info.map[v] >= 0) body_of[info.map[v]] = int32_t(v);
  std::set<int32_t> symbols;  // the dims a residual may have besides static ones
  for (int32_t p : b.params)
    for (const ir::Dim& d : b.values[size_t(p)].type.shape)
      if (auto sym = d.as_symbol()) symbols.insert(*sym);
  std::set<int32_t> later(a.params.begin() + long(info.source_params), a.params.end());  // cotangents
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n)
    for (int32_t o : a.nodes[n].outputs) later.insert(o);
  Split split;
  std::map<int32_t, int32_t> local;  // adjoint value -> value of the split function
  std::vector<int32_t> residuals;
  auto read = [&](int32_t v) {
    if (later.count(v) || local.count(v) || a.values[size_t(v)].constant >= 0) return true;
    auto it = body_of.find(v);
    if (it == body_of.end()) return false;
    for (const ir::Dim& d : a.values[size_t(v)].type.shape)
      if (!d.as_static() && !(d.as_symbol() && symbols.count(*d.as_symbol()))) return false;
    local[v] = -1;
    residuals.push_back(v);
    split.reads.push_back(it->second);
    return true;
  };
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n)
    for (int32_t i : a.nodes[n].inputs)
      if (!read(i)) return std::nullopt;
  for (int32_t r : a.results)
    if (!read(r)) return std::nullopt;
  // A cheap op (a slice, an index, a reshape, a cast) of what the backward has
  // anyway (loop invariants, other reads, scalars) is recomputed there instead of
  // kept per iteration: `xs[t]` keeps t, not a row of xs.
  std::set<int32_t> invariant;  // adjoint ids of the body's loop-invariant parameters
  for (size_t j = 0; j < b.params.size(); ++j)
    if (b.results[j] == b.params[j]) invariant.insert(a.params[j]);
  std::map<int32_t, size_t> def;  // adjoint value -> the forward node defining it
  for (size_t n = 0; n < info.forward_nodes; ++n)
    for (int32_t o : a.nodes[n].outputs) def[o] = n;
  std::set<size_t> remat;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < residuals.size() && !changed; ++k) {
      auto d = def.find(residuals[k]);
      if (d == def.end()) continue;
      const ir::Node& n = a.nodes[d->second];
      if (n.kind != ir::NodeKind::kOp || n.outputs.size() != 1 || !cheap_to_recompute(n.op)) continue;
      bool free = true;
      for (int32_t i : n.inputs)
        free = free && (a.values[size_t(i)].constant >= 0 || invariant.count(i) || local.count(i) ||
                        a.values[size_t(i)].type.shape.empty());
      if (!free) continue;
      local.erase(residuals[k]);
      residuals.erase(residuals.begin() + long(k));
      split.reads.erase(split.reads.begin() + long(k));
      remat.insert(d->second);
      for (int32_t i : n.inputs)
        if (!read(i)) return std::nullopt;
      changed = true;
    }
  }
  for (size_t j = 0; j < b.params.size(); ++j) {
    if (b.results[j] == b.params[j]) continue;
    const bool start_read = std::find(split.reads.begin(), split.reads.end(), b.params[j]) != split.reads.end();
    const bool end_read = std::find(split.reads.begin(), split.reads.end(), b.results[j]) != split.reads.end();
    if (start_read && end_read && !split.shifted.count(b.results[j])) split.shifted[b.results[j]] = j;
  }
  std::vector<ir::Type> types;
  for (int32_t v : residuals) types.push_back(a.values[size_t(v)].type);
  for (size_t k = info.source_params; k < a.params.size(); ++k) types.push_back(a.values[size_t(a.params[k])].type);
  split.fn = new_function(b.name + ".backward", types);
  ir::Function& f = s_.module().functions[size_t(split.fn)];
  for (size_t k = 0; k < residuals.size(); ++k) local[residuals[k]] = f.params[k];
  for (size_t k = info.source_params; k < a.params.size(); ++k)
    local[a.params[k]] = f.params[residuals.size() + k - info.source_params];
  auto id = [&](int32_t v) {
    auto it = local.find(v);
    if (it != local.end() && it->second >= 0) return it->second;
    f.values.push_back(a.values[size_t(v)]);  // a constant, or a value defined below
    return local[v] = int32_t(f.values.size() - 1);
  };
  std::vector<size_t> order(remat.begin(), remat.end());
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n) order.push_back(n);
  for (size_t n : order) {
    ir::Node node = a.nodes[n];
    for (int32_t& i : node.inputs) i = id(i);
    for (int32_t& o : node.outputs) o = id(o);
    f.nodes.push_back(std::move(node));
  }
  for (int32_t r : a.results) f.results.push_back(id(r));
  return split;
}

std::optional<Value> Vjp::empty_tape(const ir::Function& body, const ir::Node& node, const ir::Type& t) {
  std::vector<Value> dims{Value(int64_t(0))};
  for (const ir::Dim& d : t.shape) {
    if (auto n = d.as_static()) {
      dims.push_back(Value(*n));
      continue;
    }
    std::optional<Value> found;
    for (size_t j = 0; j < body.params.size() && !found; ++j) {
      const ir::Type& pt = body.values[size_t(body.params[j])].type;
      for (size_t axis = 0; axis < pt.rank() && !found; ++axis)
        if (pt.shape[axis] == d) found = s_.shape_item(fwd(node.inputs[j]), int64_t(axis), span_);
    }
    if (!found) return std::nullopt;
    dims.push_back(*found);
  }
  Args a;
  a.pos = {make_tuple(std::move(dims))};
  a.kw.emplace_back("dtype", Value(DTypeV{t.dtype}));
  a.span = span_;
  return s_.call_sg("zeros", a);
}

void Vjp::widen_while(size_t index, const ir::Node& node) {
  ir::Module& m = s_.module();
  const int32_t cond = node.functions[0], body = node.functions[1];
  const ir::Function b = m.functions[size_t(body)];
  Tape tape;
  tape.mask = loop_mask(body, active_inputs(node, 0));
  tape.adjoint = nested(body, tape.mask, tape.mask);
  std::set<int32_t> carried_reads;  // parameters read off the loop's inputs or outputs
  for (size_t j = 0; j < b.params.size(); ++j) {
    if (b.results[j] == b.params[j]) {
      carried_reads.insert(b.params[j]);  // loop-invariant: the backward reads the input
    } else if (appends_to(b, j)) {
      tape.appended.push_back(j);
      carried_reads.insert(b.params[j]);
    }
  }
  // The values to keep: those the body's backward reads where it splits from the
  // forward (no recomputation), else the carried values each iteration starts from.
  std::vector<int32_t> wanted;
  std::map<int32_t, size_t> shifted;  // body value -> carried position
  if (std::optional<Split> split = split_backward(tape.adjoint, body)) {
    tape.backward = split->fn;
    tape.backward_reads = split->reads;
    for (int32_t v : split->reads)
      if (!split->shifted.count(v)) wanted.push_back(v);
    shifted = split->shifted;
  } else {
    wanted = b.params;
  }
  std::vector<std::optional<Value>> empties;
  for (int32_t v : wanted) {
    if (carried_reads.count(v) || std::find(tape.taped.begin(), tape.taped.end(), v) != tape.taped.end()) continue;
    std::optional<Value> empty = empty_tape(b, node, b.values[size_t(v)].type);
    if (!empty) {  // a residual whose dims the loop's inputs do not show: recompute instead
      if (tape.backward >= 0) {
        tape.backward = -1;
        tape.backward_reads.clear();
        shifted.clear();
        tape.taped.clear();
        empties.clear();
        wanted = b.params;
        for (int32_t p : wanted) {
          if (carried_reads.count(p)) continue;
          tape.taped.push_back(p);
          empties.push_back(empty_tape(b, node, b.values[size_t(p)].type));
        }
        break;
      }
    }
    tape.taped.push_back(v);
    empties.push_back(empty);
  }
  std::vector<ir::Type> extra{ir::Type{DType::kI64, {}}};
  for (int32_t v : tape.taped) {
    ir::Type t = b.values[size_t(v)].type;
    t.shape.insert(t.shape.begin(), ir::Dim::symbol(m.symbols.fresh("T")));
    extra.push_back(t);
  }
  const int32_t cond2 = clone_with_params(cond, m.functions[size_t(cond)].name + ".taped", extra);
  const int32_t body2 = clone_with_params(body, b.name + ".taped", extra);
  {  // body2: count, and append each value kept to its tape
    FnBuilder bb;
    bb.fn = body2;
    FnBuilder* saved = s_.builder();
    s_.set_builder(&bb);
    const size_t np = b.params.size();
    const std::vector<int32_t> params = s_.fn().params;
    const Value n1 = add(s_.staged(params[np]), Value(int64_t(1)));
    std::vector<int32_t> results = s_.fn().results;
    results.push_back(s_.materialize(n1, span_));
    for (size_t k = 0; k < tape.taped.size(); ++k) {
      const Value item = expand(s_.staged(tape.taped[k]), {0});
      Args a;
      a.pos = {make_tuple({s_.staged(params[np + 1 + k]), item})};
      a.span = span_;
      const Value grown = s_.call_sg("concatenate", a);
      int32_t id = s_.materialize(grown, span_);
      s_.fn().values[size_t(id)].type = s_.fn().values[size_t(params[np + 1 + k])].type;
      results.push_back(id);
    }
    s_.fn().results = results;
    s_.set_builder(saved);
  }
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  inputs.push_back(s_.materialize(s_.to_tensor(Value(int64_t(0)), DType::kI64, span_), span_));
  for (size_t k = 0; k < tape.taped.size(); ++k) {
    if (!empties[k])
      refuse("through this loop: a value it carries has a dim that changes from one iteration to the next");
    inputs.push_back(s_.materialize(*empties[k], span_));
  }
  std::vector<ir::Type> types;
  for (int32_t o : node.outputs) types.push_back(w_->src.values[size_t(o)].type);
  for (const ir::Type& t : extra) types.push_back(t);
  for (size_t j : tape.appended)
    tape.start_lengths.push_back(s_.materialize(s_.to_tensor(s_.shape_item(fwd(node.inputs[j]), 0, span_), DType::kI64, span_), span_));
  const std::vector<int32_t> outs = emit(ir::NodeKind::kWhile, {cond2, body2}, inputs, types);
  for (size_t j = 0; j < node.outputs.size(); ++j) w_->map[size_t(node.outputs[j])] = outs[j];
  tape.count = outs[node.outputs.size()];
  for (size_t k = 0; k < tape.taped.size(); ++k) {
    tape.stacks.push_back(outs[node.outputs.size() + 1 + k]);
    s_.fn().values[size_t(tape.stacks.back())].name = "gradient tape";  // graph-run --profile reports them
  }
  // What the last iteration hands on closes the tape of the value each iteration
  // starts from: entry i + 1 is what iteration i ended with.
  std::set<size_t> closed;
  for (const auto& [v, j] : shifted) {
    const auto at = std::find(tape.taped.begin(), tape.taped.end(), b.params[j]);
    const size_t k = size_t(at - tape.taped.begin());
    tape.shifted[v] = k;
    if (!closed.insert(k).second) continue;
    Args a;
    a.pos = {make_tuple({s_.staged(tape.stacks[k]), expand(s_.staged(outs[j]), {0})})};
    a.span = span_;
    const int32_t id = s_.materialize(s_.call_sg("concatenate", a), span_);
    s_.fn().values[size_t(id)].type = s_.fn().values[size_t(tape.stacks[k])].type;
    tape.stacks[k] = id;
  }
  w_->tapes[index] = std::move(tape);
}

std::vector<bool> Vjp::active_results(int32_t f, const std::vector<bool>& params) {
  const ir::Function& fn = s_.module().functions[size_t(f)];
  std::vector<bool> act(fn.values.size(), false);
  for (size_t k = 0; k < fn.params.size(); ++k)
    act[size_t(fn.params[k])] = params[k] && is_float(fn.values[size_t(fn.params[k])].type.dtype);
  for (const ir::Node& node : fn.nodes) {
    bool any = false;
    for (int32_t i : node.inputs) any = any || act[size_t(i)];
    if (any)
      for (int32_t o : node.outputs)
        act[size_t(o)] = is_float(fn.values[size_t(o)].type.dtype) && !s_.differentiation().gradient_stopped(f, o);
  }
  std::vector<bool> out;
  for (int32_t r : fn.results) out.push_back(act[size_t(r)]);
  return out;
}

std::vector<bool> Vjp::loop_mask(int32_t body, std::vector<bool> params) {
  for (;;) {
    const std::vector<bool> r = active_results(body, params);
    bool changed = false;
    for (size_t j = 0; j < params.size(); ++j)
      if (r[j] && !params[j]) params[j] = changed = true;
    if (!changed) return params;
  }
}

std::vector<bool> Vjp::active_inputs(const ir::Node& node, size_t first) {
  std::vector<bool> mask;
  for (size_t k = first; k < node.inputs.size(); ++k) {
    const int32_t v = node.inputs[k];
    mask.push_back(w_->active[size_t(v)] && is_float(w_->src.values[size_t(v)].type.dtype));
  }
  return mask;
}

// The adjoint of a control node: a node of the same kind over the adjoints of its
// functions, taking the node's inputs and the cotangents of `results`, giving the
// gradients of the inputs `params` marks (inputs from `first` on).
void Vjp::backward_if(size_t index, const ir::Node& node) {
  const std::vector<bool> params = active_inputs(node, 1);
  std::vector<bool> results = active_results(node.functions[0], params);
  const std::vector<bool> other = active_results(node.functions[1], params);
  for (size_t k = 0; k < results.size(); ++k) results[k] = results[k] || other[k];
  results = reached_results(std::move(results), node, w_->useful);
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (results[k]) inputs.push_back(s_.materialize(ct_or_zeros(node.outputs[k]), span_));
  std::vector<ir::Type> types;
  std::vector<int32_t> grads_for;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k]) {
      types.push_back(w_->src.values[size_t(node.inputs[k + 1])].type);
      grads_for.push_back(node.inputs[k + 1]);
    }
  if (grads_for.empty()) return;
  if (backward_taped(index, node, inputs, types, grads_for)) return;
  const int32_t then_vjp = nested(node.functions[0], params, results);
  const int32_t else_vjp = nested(node.functions[1], params, results);
  const std::vector<int32_t> outs = emit(ir::NodeKind::kIf, {then_vjp, else_vjp}, inputs, types);
  for (size_t k = 0; k < outs.size(); ++k) accumulate(grads_for[k], s_.staged(outs[k]));
}

void Vjp::backward_call(size_t index, const ir::Node& node) {
  const std::vector<bool> params = active_inputs(node, 0);
  const std::vector<bool> results = reached_results(active_results(node.functions[0], params), node, w_->useful);
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (results[k]) inputs.push_back(s_.materialize(ct_or_zeros(node.outputs[k]), span_));
  std::vector<ir::Type> types;
  std::vector<int32_t> grads_for;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k]) {
      types.push_back(w_->src.values[size_t(node.inputs[k])].type);
      grads_for.push_back(node.inputs[k]);
    }
  if (grads_for.empty()) return;
  if (backward_taped(index, node, inputs, types, grads_for)) return;
  const int32_t adj = nested(node.functions[0], params, results);
  const std::vector<int32_t> outs = emit(ir::NodeKind::kCall, {adj}, inputs, types);
  for (size_t k = 0; k < outs.size(); ++k) accumulate(grads_for[k], s_.staged(outs[k]));
}

void Vjp::backward_while(size_t index, const ir::Node& node) {
  ir::Module& m = s_.module();
  const Tape tape = w_->tapes.at(index);
  const ir::Function b = m.functions[size_t(node.functions[1])];
  const size_t np = b.params.size();
  std::vector<size_t> floats, invariant;
  for (size_t j = 0; j < np; ++j) {
    if (tape.mask[j]) floats.push_back(j);
    if (b.results[j] == b.params[j]) invariant.push_back(j);
  }
  if (floats.empty()) return;
  // Carried backwards: i, a cotangent per differentiated position, the tapes, the
  // invariants, the appended lists and their lengths before the loop.
  std::vector<int32_t> init;
  std::vector<ir::Type> types;
  init.push_back(tape.count);
  types.push_back(ir::Type{DType::kI64, {}});
  for (size_t j : floats) {
    init.push_back(s_.materialize(ct_or_zeros(node.outputs[j]), span_));
    types.push_back(w_->src.values[size_t(node.outputs[j])].type);
  }
  for (int32_t stack : tape.stacks) {
    init.push_back(stack);
    types.push_back(s_.fn().values[size_t(stack)].type);
  }
  for (size_t j : invariant) {
    init.push_back(remap(node.inputs[j]));
    types.push_back(w_->src.values[size_t(node.inputs[j])].type);
  }
  for (size_t k = 0; k < tape.appended.size(); ++k) {
    init.push_back(remap(node.outputs[tape.appended[k]]));
    types.push_back(w_->src.values[size_t(node.outputs[tape.appended[k]])].type);
    init.push_back(tape.start_lengths[k]);
    types.push_back(ir::Type{DType::kI64, {}});
  }
  const std::string base = b.name + ".reverse";
  const int32_t cond = new_function(base + ".cond", types);
  {
    FnBuilder cb;
    cb.fn = cond;
    FnBuilder* saved = s_.builder();
    s_.set_builder(&cb);
    const Value more = bin(OpId::Greater, s_.staged(s_.fn().params[0]), Value(int64_t(0)));
    s_.fn().results = {s_.materialize(more, span_)};
    s_.set_builder(saved);
  }
  const int32_t rbody = new_function(base, types);
  std::vector<Deferred> deferred;
  {
    FnBuilder rb;
    rb.fn = rbody;
    FnBuilder* saved = s_.builder();
    s_.set_builder(&rb);
    const std::vector<int32_t> p = s_.fn().params;
    const Value i1 = sub(s_.staged(p[0]), Value(int64_t(1)));
    std::map<int32_t, Value> state;  // body value -> its value in iteration i1
    const size_t tapes_at = 1 + floats.size();
    for (size_t k = 0; k < tape.taped.size(); ++k)
      state[tape.taped[k]] = s_.index_tensor_value(s_.staged(p[tapes_at + k]), i1, span_);
    for (const auto& [v, k] : tape.shifted)
      state[v] = s_.index_tensor_value(s_.staged(p[tapes_at + k]), add(i1, Value(int64_t(1))), span_);
    const size_t invariants_at = tapes_at + tape.taped.size();
    for (size_t k = 0; k < invariant.size(); ++k) state[b.params[invariant[k]]] = s_.staged(p[invariants_at + k]);
    const size_t lists_at = invariants_at + invariant.size();
    for (size_t k = 0; k < tape.appended.size(); ++k) {
      // list[:start_length + i]
      const Value final_list = s_.staged(p[lists_at + 2 * k]);
      const Value end = add(s_.staged(p[lists_at + 2 * k + 1]), i1);
      const size_t n = rank(final_list);
      std::vector<int64_t> zb(n, 0), ze(n, 0), st(n, 1), fl(n, 0);
      fl[0] = ops::attr::kDynEnd;
      ops::Attrs attrs;
      attrs.values = {ops::AttrValue::Ints(zb), ops::AttrValue::Ints(ze), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
      state[b.params[tape.appended[k]]] = s_.apply(OpId::Slice, std::move(attrs), {final_list, end}, span_);
    }
    std::vector<int32_t> call_in;
    const std::vector<int32_t>& reads = tape.backward >= 0 ? tape.backward_reads : b.params;
    for (int32_t v : reads) call_in.push_back(s_.materialize(state.at(v), span_));
    for (size_t k = 0; k < floats.size(); ++k) call_in.push_back(p[1 + k]);
    const int32_t callee = tape.backward >= 0 ? tape.backward : tape.adjoint;
    const std::vector<int32_t> g = inline_function(callee, call_in);
    std::vector<int32_t> results{s_.materialize(i1, span_)};
    for (int32_t id : g) results.push_back(id);
    for (size_t k = tapes_at; k < p.size(); ++k) results.push_back(p[k]);
    std::vector<bool> invariant_float;
    for (size_t j : floats) invariant_float.push_back(b.results[j] == b.params[j]);
    deferred = defer_products(invariant_float, results, p);
    s_.fn().results = results;
    s_.set_builder(saved);
  }
  carry_deferred(deferred, cond, init, types);
  const std::vector<int32_t> outs = emit(ir::NodeKind::kWhile, {cond, rbody}, init, types);
  std::vector<Value> grads;
  for (size_t k = 0; k < floats.size(); ++k) grads.push_back(s_.staged(outs[1 + k]));
  const size_t lists_out = outs.size() - 2 * deferred.size();
  for (size_t d = 0; d < deferred.size(); ++d)
    grads[deferred[d].k] = finish_deferred(grads[deferred[d].k], outs[lists_out + 2 * d], outs[lists_out + 2 * d + 1]);
  for (size_t k = 0; k < floats.size(); ++k) {
    const int32_t in = node.inputs[floats[k]];
    if (w_->active[size_t(in)]) accumulate(in, grads[k]);
  }
}

void Vjp::backward(size_t index, const ir::Node& node) {
  span_ = node.span;
  bool has_ct = false;
  for (int32_t o : node.outputs) has_ct = has_ct || w_->ct.count(o);
  if (!has_ct) return;
  switch (node.kind) {
    case ir::NodeKind::kIf: return backward_if(index, node);
    case ir::NodeKind::kCall: return backward_call(index, node);
    case ir::NodeKind::kWhile:
      if (w_->tapes.count(index)) backward_while(index, node);
      return;
    case ir::NodeKind::kOp: break;
  }
  const Grads g = op_rule(node);
  for (size_t k = 0; k < g.size() && k < node.inputs.size(); ++k) {
    const int32_t in = node.inputs[k];
    if (!g[k] || !w_->active[size_t(in)]) continue;
    accumulate(in, *g[k]);
  }
}

int32_t Vjp::nested(int32_t f, const std::vector<bool>& params, const std::vector<bool>& results) {
  const auto key = std::make_tuple(f, params, results);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  VjpRequest r;
  r.fn = f;
  r.keep_primal = false;
  r.diff_params = params;
  r.ct_results = results;
  return build(r);
}

int32_t Vjp::build(const VjpRequest& r) {
  Work work;
  work.src = s_.module().functions[size_t(r.fn)];
  work.src_id = r.fn;
  work.closure = building_;  // a closure member's adjoint; nested ones are not
  work.member = building_member_;
  building_ = nullptr;
  segment_loops(work.src);
  const ir::Function& src = work.src;
  std::vector<ir::Type> param_types;
  for (int32_t p : src.params) param_types.push_back(src.values[size_t(p)].type);
  for (size_t k = 0; k < src.results.size(); ++k)
    if (r.ct_results[k]) param_types.push_back(src.values[size_t(src.results[k])].type);
  if (work.closure != nullptr)  // a closure member: the gradients so far, which it adds to
    for (size_t k = 0; k < src.params.size(); ++k)
      if (r.diff_params[k]) param_types.push_back(src.values[size_t(src.params[k])].type);
  const int32_t g = new_function(src.name + ".vjp", param_types);
  if (!r.keep_primal && work.closure == nullptr) memo_[std::make_tuple(r.fn, r.diff_params, r.ct_results)] = g;

  Work* saved_work = w_;
  FnBuilder* saved_builder = s_.builder();
  const SourceSpan saved_span = span_;
  w_ = &work;
  FnBuilder builder;
  builder.fn = g;
  s_.set_builder(&builder);

  work.map.assign(src.values.size(), -1);
  const std::vector<int32_t> params = s_.fn().params;
  for (size_t k = 0; k < src.params.size(); ++k) work.map[size_t(src.params[k])] = params[k];

  // Activity: values that depend on a differentiated parameter, through nodes
  // other than stop_gradient's; usefulness: values a cotangent reaches.
  activity(r.fn, src, r.diff_params, r.ct_results, work.active, work.useful);
  const std::vector<bool>& useful = work.useful;

  // Forward.
  for (size_t n = 0; n < src.nodes.size(); ++n) {
    const ir::Node& node = src.nodes[n];
    span_ = node.span;
    if (!r.keep_primal && node.kind == ir::NodeKind::kOp && node.op == OpId::Print) continue;
    bool differentiated = false;
    for (int32_t o : node.outputs) differentiated = differentiated || (work.active[size_t(o)] && useful[size_t(o)]);
    if (node.kind == ir::NodeKind::kWhile && differentiated) widen_while(n, node);
    else if (!(node.kind == ir::NodeKind::kCall && differentiated && !work.closure && taped_call(n, node)))
      copy_forward(n, node);
  }

  built_[g] = Built{s_.fn().nodes.size(), src.params.size(), work.map};

  // Backward.
  size_t next_ct = src.params.size();
  // A closure member starts from the gradients it was handed (before the results'
  // cotangents, as a result may be a parameter).
  if (work.closure != nullptr) {
    size_t next_acc = next_ct + size_t(std::count(r.ct_results.begin(), r.ct_results.end(), true));
    for (size_t k = 0; k < src.params.size(); ++k)
      if (r.diff_params[k]) w_->ct.insert_or_assign(src.params[k], s_.staged(params[next_acc++]));
  }
  for (size_t k = 0; k < src.results.size(); ++k) {
    if (!r.ct_results[k]) continue;
    const int32_t res = src.results[k];
    const int32_t ct_param = params[next_ct++];
    if (work.active[size_t(res)]) accumulate(res, s_.staged(ct_param));
  }
  for (size_t n = src.nodes.size(); n > 0; --n) {
    const ir::Node& node = src.nodes[n - 1];
    bool needed = false;
    for (int32_t o : node.outputs) needed = needed || work.active[size_t(o)];
    if (needed) backward(n - 1, node);
  }

  span_ = call_span_;
  std::vector<int32_t> results;
  if (r.keep_primal)
    for (int32_t res : src.results) results.push_back(remap(res));
  for (size_t k = 0; k < src.params.size(); ++k) {
    if (!r.diff_params[k]) continue;
    const int32_t p = src.params[k];
    Value gv = ct_or_zeros(p);
    if (s_.tensor_dtype(gv) != src.values[size_t(p)].type.dtype) gv = s_.cast(gv, src.values[size_t(p)].type.dtype, span_);
    results.push_back(s_.materialize(gv, span_));
  }
  s_.fn().results = results;

  s_.set_builder(saved_builder);
  w_ = saved_work;
  span_ = saved_span;
  return g;
}

}  // namespace sg::compiler::staging::autodiff_detail

namespace sg::compiler::staging {

int32_t vjp_function(Stager& s, const VjpRequest& request, SourceSpan span) {
  autodiff_detail::Vjp v(s, span);
  return v.build(request);
}

}  // namespace sg::compiler::staging
