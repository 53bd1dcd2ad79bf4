// Segmented checkpointing (SPEC §11, DESIGN.md #14): a loop whose body calls an
// sg.checkpoint function keeps one state per segment of iterations instead of one per
// iteration. Before the loop is differentiated it is rewritten, in the function being
// differentiated, from
//
//   while cond(s): s = body(s)
//
// to a loop over segments whose body is a Call of the segment:
//
//   k = 0
//   while cond(s): s = segment(s, length(k)); k += 1
//   segment(s, n): j = 0; while j < n and cond(s): s = body(s); j += 1
//
// with the checkpoint calls of `body` inlined into the segment's loop. The outer body
// has a call inside, so its gradient keeps the state each segment starts from and its
// adjoint recomputes the segment: the segment's loop keeps what its backward reads for
// its own iterations only, and frees it when the segment's backward returns. With
// length(k) = 2k + 1 the segments start at iterations 0, 1, 4, 9, ...: about sqrt(T)
// states, and one segment of at most 2 sqrt(T) + 1 iterations, for any trip count,
// known or not; sg.checkpoint(f, segment=S) fixes the length at S instead. The forward
// runs twice (once, then once more segment by segment in the backward).
#include "staging/autodiff_internal.h"

namespace sg::compiler::staging::autodiff_detail {

namespace {

bool calls_checkpoint(const ir::Function& f, const std::map<int32_t, int64_t>& segments, int64_t& segment) {
  for (const ir::Node& n : f.nodes)
    if (n.kind == ir::NodeKind::kCall && segments.count(n.functions[0])) {
      segment = segments.at(n.functions[0]);
      return true;
    }
  return false;
}

// For a counted loop, the carried positions (i, end): the condition is less(i, end)
// (alone or and-ed with others), the body hands on i + 1 and end unchanged.
std::optional<std::pair<size_t, size_t>> counted(const ir::Module& m, const ir::Function& cond,
                                                 const ir::Function& body) {
  auto position = [](const ir::Function& f, int32_t v) -> std::optional<size_t> {
    for (size_t j = 0; j < f.params.size(); ++j)
      if (f.params[j] == v) return j;
    return std::nullopt;
  };
  auto is_one = [&](int32_t v) {
    const ir::Value& c = body.values[size_t(v)];
    if (c.constant < 0) return false;
    const ir::Constant& k = m.constants[size_t(c.constant)];
    return k.dtype == DType::kI64 && k.shape.empty() && k.bytes.size() == 8 &&
           *reinterpret_cast<const int64_t*>(k.bytes.data()) == 1;
  };
  for (const ir::Node& n : cond.nodes) {
    if (n.kind != ir::NodeKind::kOp || n.op != OpId::Less) continue;
    const std::optional<size_t> i = position(cond, n.inputs[0]), end = position(cond, n.inputs[1]);
    if (!i || !end || *i == *end || body.results[*end] != body.params[*end]) continue;
    if (cond.values[size_t(n.inputs[0])].type.dtype != DType::kI64) continue;
    for (const ir::Node& b : body.nodes)
      if (b.kind == ir::NodeKind::kOp && b.op == OpId::Add && b.outputs[0] == body.results[*i] &&
          b.inputs[0] == body.params[*i] && is_one(b.inputs[1]))
        return std::make_pair(*i, *end);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> Vjp::checkpoint_call(int32_t f) const {
  const ir::Function& body = s_.module().functions[size_t(f)];
  int64_t segment = 0;
  if (!calls_checkpoint(body, s_.differentiation().checkpoint_segments(), segment)) return std::nullopt;
  // A list the body appends to changes shape every iteration: a state per segment
  // could not be taped, so such a loop keeps its usual tapes.
  for (size_t j = 0; j < body.params.size(); ++j)
    if (appends_to(body, j)) return std::nullopt;
  return segment;
}

void Vjp::segment_loops(ir::Function& src) {
  if (s_.differentiation().checkpoint_segments().empty()) return;
  for (ir::Node& node : src.nodes) {
    if (node.kind != ir::NodeKind::kWhile) continue;
    if (std::optional<int64_t> segment = checkpoint_call(node.functions[1])) segment_loop(src, node, *segment);
  }
}

void Vjp::segment_loop(ir::Function& src, ir::Node& node, int64_t segment) {
  ir::Module& m = s_.module();
  const int32_t cond = node.functions[0], body = node.functions[1];
  const ir::Function b = m.functions[size_t(body)];
  const size_t n = b.params.size();
  const ir::Type i64{DType::kI64, {}};
  std::vector<ir::Type> ts;
  for (int32_t p : b.params) ts.push_back(b.values[size_t(p)].type);
  std::vector<ir::Type> with_two = ts, with_one = ts;
  with_two.insert(with_two.end(), {i64, i64});
  with_one.push_back(i64);
  const std::optional<std::pair<size_t, size_t>> counter = counted(m, m.functions[size_t(cond)], b);
  const SourceSpan saved_span = span_;
  span_ = node.span;
  FnBuilder* saved = s_.builder();
  FnBuilder fb;
  auto enter = [&](int32_t f) {
    fb = FnBuilder{};
    fb.fn = f;
    s_.set_builder(&fb);
    return s_.fn().params;
  };
  auto first = [&](const std::vector<int32_t>& p, size_t count) {
    return std::vector<int32_t>(p.begin(), p.begin() + std::ptrdiff_t(count));
  };
  // The segment's loop: (state, j, n) while j < n and cond(state).
  const int32_t seg_cond = new_function(b.name + ".segment.cond", with_two);
  {
    const std::vector<int32_t> p = enter(seg_cond);
    const Value c = s_.staged(inline_function(cond, first(p, n))[0]);
    const Value more = bin(OpId::Less, s_.staged(p[n]), s_.staged(p[n + 1]));
    s_.fn().results = {s_.materialize(s_.apply(OpId::LogicalAnd, {}, {more, c}, span_), span_)};
  }
  const int32_t seg_body = new_function(b.name + ".segment.body", with_two);
  {
    const std::vector<int32_t> p = enter(seg_body);
    std::vector<int32_t> results = inline_function(body, first(p, n), true);
    results.push_back(s_.materialize(add(s_.staged(p[n]), Value(int64_t(1))), span_));
    results.push_back(p[n + 1]);
    s_.fn().results = results;
  }
  const int32_t seg = new_function(b.name + ".segment", with_one);
  {
    const std::vector<int32_t> p = enter(seg);
    std::vector<int32_t> inputs = first(p, n);
    inputs.push_back(s_.materialize(s_.to_tensor(Value(int64_t(0)), DType::kI64, span_), span_));
    inputs.push_back(p[n]);
    const std::vector<int32_t> outs = emit(ir::NodeKind::kWhile, {seg_cond, seg_body}, inputs, with_two);
    std::vector<int32_t> results;
    for (size_t j = 0; j < n; ++j) results.push_back(b.results[j] == b.params[j] ? p[j] : outs[j]);
    s_.fn().results = results;
  }
  // The loop over segments: (state, k) while cond(state).
  const int32_t outer_cond = new_function(m.functions[size_t(cond)].name + ".segments", with_two);
  {
    const std::vector<int32_t> p = enter(outer_cond);
    s_.fn().results = {inline_function(cond, first(p, n))[0]};
  }
  // Carried besides the state: k, the segments run, and the length of a counted loop's
  // segments (0 until the first starts).
  const int32_t outer_body = new_function(b.name + ".segments", with_two);
  {
    const std::vector<int32_t> p = enter(outer_body);
    const Value k = s_.staged(p[n]);
    Value length = s_.staged(p[n + 1]);
    if (segment > 0) {
      length = s_.to_tensor(Value(segment), DType::kI64, span_);
    } else if (counter) {
      Value left = sub(s_.staged(p[counter->second]), s_.staged(p[counter->first]));
      left = bin(OpId::Maximum, left, Value(int64_t(1)));
      const Value root = un(OpId::Ceil, un(OpId::Sqrt, s_.cast(left, DType::kF32, span_)));
      const Value first_length = s_.cast(root, DType::kI64, span_);
      length = where(bin(OpId::Equal, length, Value(int64_t(0))), first_length, length);
    } else {
      length = add(mul(k, Value(int64_t(2))), Value(int64_t(1)));
    }
    std::vector<int32_t> inputs = first(p, n);
    inputs.push_back(s_.materialize(length, span_));
    const std::vector<int32_t> outs = emit(ir::NodeKind::kCall, {seg}, inputs, ts);
    std::vector<int32_t> results;
    // A value the body hands on unchanged stays a parameter: the loop's gradient reads
    // it off the loop's input instead of keeping it per segment.
    for (size_t j = 0; j < n; ++j) results.push_back(b.results[j] == b.params[j] ? p[j] : outs[j]);
    results.push_back(s_.materialize(add(k, Value(int64_t(1))), span_));
    results.push_back(s_.materialize(length, span_));
    s_.fn().results = results;
  }
  s_.set_builder(saved);
  span_ = saved_span;

  const int32_t k0 = src.add_value(i64, "", node.span);
  src.values[size_t(k0)].constant = s_.add_constant(*scalar_tensor(DType::kI64, 0, 0));
  node.functions = {outer_cond, outer_body};
  node.inputs.insert(node.inputs.end(), {k0, k0});
  node.outputs.push_back(src.add_value(i64, "", node.span));
  node.outputs.push_back(src.add_value(i64, "", node.span));
}

}  // namespace sg::compiler::staging::autodiff_detail
