// Hoists the input projection of a counted loop out of its While (issue 7):
//
//   for t in range(xs.shape[0]):  ... xs[t] @ W [+ b] ...
//
// computes row t of one loop-invariant product per iteration. The pass computes
// P = xs @ W [+ b] once before the While, one GEMM instead of T GEMVs, and the body
// reads row t of P. An RNN cell's `xs[t] @ W + h @ U + b` brings its b into P too:
// (row @ W + y) + b becomes row(P, t) + y, a reassociation that moves rounding by
// an ulp or so of the sum (inside SPEC §1's tolerance) and leaves the body
// row(P, t) + h @ U, which fuses into one fully_connected with its tanh. It
// applies only where that is the same work the loop does anyway, and cannot fail
// where the loop would not:
//  - the loop is counted: cond is exactly `t < n` over two carried values, t
//    starts at the constant 0 and the body returns t + 1, n is carried unchanged
//    and is xs.shape[0] (a shape_dim of xs before the While, or a constant equal to
//    xs's static first dim). A break or return adds a flag to cond, so such a
//    loop does not match; each row of P is then read exactly once.
//  - xs (rank 2), W (rank 2) and the bias are loop-invariant (carried unchanged or
//    constants), W and the bias with static shapes and xs with a static second dim,
//    so the hoisted ops have no run-time shape check to fail when the loop runs zero
//    times (P is then empty);
//  - the row is slice(xs, t) (an index on axis 0, the other axes whole) or
//    take(xs, t, axis=0), t the counter itself, so 0 <= t < rows(P).
// P enters the loop as an extra carried value (the body returns it unchanged; cond
// ignores it), the way loop-invariant code motion carries hoisted values.
#include <optional>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

using ops::OpId;

// The counter t and trip count n of a While whose trip count is fixed on entry.
struct CountedLoop {
  size_t counter = 0;  // index of t among the carried values
  size_t limit = 0;    // index of n
};

// One match in the body: row(xs, t) @ W [+ b] -> the value `result`.
struct Projection {
  size_t core = 0;                // the matmul or fully_connected node
  std::optional<size_t> add;      // the bias add folded in
  int32_t xs = -1, w = -1;        // body values
  std::vector<int32_t> extra;     // fully_connected's bias, or the folded add's bias
  bool bias_first = false;        // the folded add reads (b, matmul)
  // (row @ W + y) + b: the add of y, and the add of b that it then takes the place of.
  std::optional<size_t> mid, late;
  int32_t result = -1;            // what row(P, t) replaces
};

const ir::Node* defining_node(const ir::Function& f, int32_t v, size_t before) {
  for (size_t i = 0; i < before; ++i)
    for (int32_t o : f.nodes[i].outputs)
      if (o == v) return &f.nodes[i];
  return nullptr;
}

bool is_op(const ir::Node* n, OpId op) { return n && n->kind == ir::NodeKind::kOp && n->op == op; }

// The value of an integer scalar constant that is 0 or 1.
std::optional<int64_t> zero_or_one(const ir::Module& m, const ir::Function& f, int32_t v) {
  const ir::Constant* k = constant_of(m, f, v);
  if (!k || !k->shape.empty() || !is_int(k->dtype)) return std::nullopt;
  for (int64_t x = 0; x <= 1; ++x)
    if (constant_is_splat(*k, double(x))) return x;
  return std::nullopt;
}

std::optional<CountedLoop> counted_loop(const ir::Module& m, const ir::Function& f, const ir::Node& loop) {
  const ir::Function& cond = m.functions[size_t(loop.functions[0])];
  const ir::Function& body = m.functions[size_t(loop.functions[1])];
  const size_t carried = body.params.size();
  if (cond.params.size() != carried || body.results.size() != carried || loop.inputs.size() != carried)
    return std::nullopt;
  if (cond.nodes.size() != 1 || cond.results.size() != 1) return std::nullopt;
  const ir::Node& test = cond.nodes[0];
  if (!is_op(&test, OpId::Less) || cond.results[0] != test.outputs[0]) return std::nullopt;
  CountedLoop c;
  bool found_t = false, found_n = false;
  for (size_t i = 0; i < carried; ++i) {
    if (cond.params[i] == test.inputs[0]) c.counter = i, found_t = true;
    if (cond.params[i] == test.inputs[1]) c.limit = i, found_n = true;
  }
  if (!found_t || !found_n || c.counter == c.limit) return std::nullopt;
  const int32_t t = body.params[c.counter];
  const ir::Type& tt = body.values[size_t(t)].type;
  if (tt.rank() != 0 || !is_int(tt.dtype)) return std::nullopt;
  if (body.results[c.limit] != body.params[c.limit]) return std::nullopt;
  if (zero_or_one(m, f, loop.inputs[c.counter]) != 0) return std::nullopt;
  // The body returns add(t, 1).
  const ir::Node* next = defining_node(body, body.results[c.counter], body.nodes.size());
  if (!is_op(next, OpId::Add)) return std::nullopt;
  const int32_t a = next->inputs[0], b = next->inputs[1];
  const int32_t one = a == t ? b : b == t ? a : -1;
  if (one < 0 || zero_or_one(m, body, one) != 1) return std::nullopt;
  return c;
}

// The outer value a loop-invariant body value stands for: a carried value the
// body returns unchanged (its loop input), or a constant (-2: add one outside).
std::optional<int32_t> invariant_source(const ir::Function& body, const ir::Node& loop, int32_t v) {
  if (body.values[size_t(v)].constant >= 0) return -2;
  for (size_t i = 0; i < body.params.size(); ++i)
    if (body.params[i] == v && body.results[i] == v) return loop.inputs[i];
  return std::nullopt;
}

bool static_invariant(const ir::Function& body, const ir::Node& loop, int32_t v) {
  return invariant_source(body, loop, v) && static_shape(body.values[size_t(v)].type);
}

// True when n (the loop's trip count) is xs's first dim.
bool trips_over_rows(const ir::Module& m, const ir::Function& f, size_t w, const ir::Node& loop,
                     const CountedLoop& c, const ir::Function& body, int32_t xs) {
  const int32_t n = loop.inputs[c.limit];
  const std::optional<int32_t> xs_outer = invariant_source(body, loop, xs);
  if (!xs_outer) return false;
  const ir::Node* dim = defining_node(f, n, w);
  if (*xs_outer >= 0 && is_op(dim, OpId::ShapeDim) && dim->inputs[0] == *xs_outer && dim->attrs.i(0) == 0)
    return true;
  const ir::Constant* k = constant_of(m, f, n);
  const std::optional<int64_t> rows = body.values[size_t(xs)].type.shape[0].as_static();
  return k && rows && k->shape.empty() && is_int(k->dtype) && constant_is_splat(*k, double(*rows));
}

// True when node `s` of the body reads row t of some xs: slice(xs, t) with only
// axis 0 indexed, or take(xs, t, axis=0).
bool is_row_of(const ir::Function& body, const ir::Node* s, int32_t t) {
  if (!s || s->kind != ir::NodeKind::kOp || s->inputs.size() != 2 || s->inputs[1] != t) return false;
  if (s->op == OpId::Take) return s->attrs.i(0) == 0;
  if (s->op != OpId::Slice) return false;
  const std::vector<int64_t>& step = s->attrs.ints(ops::attr::kSliceStep);
  const std::vector<int64_t>& flags = s->attrs.ints(ops::attr::kSliceFlags);
  const size_t rank = body.values[size_t(s->inputs[0])].type.rank();
  if (flags.size() != rank || step.size() != rank || rank == 0) return false;
  if (flags[0] != (ops::attr::kIndex | ops::attr::kDynBegin)) return false;
  for (size_t a = 1; a < rank; ++a)
    if (flags[a] != 0 || step[a] != 1) return false;
  return true;
}

// The add node after `from` that reads v, which side, its other operand and sum.
struct Addend {
  size_t node = 0;
  int side = 0;
  int32_t other = -1, sum = -1;
};

std::optional<Addend> sole_add(const ir::Function& body, size_t from, int32_t v, const std::vector<int32_t>& uses) {
  if (uses[size_t(v)] != 1) return std::nullopt;
  for (size_t j = from; j < body.nodes.size(); ++j) {
    const ir::Node& n = body.nodes[j];
    for (int32_t in : n.inputs)
      if (in == v) {
        if (!is_op(&n, OpId::Add) || n.inputs[0] == n.inputs[1]) return std::nullopt;
        const int side = n.inputs[0] == v ? 0 : 1;
        return Addend{j, side, n.inputs[size_t(1 - side)], n.outputs[0]};
      }
  }
  return std::nullopt;
}

// A loop-invariant addend of static shape that broadcasts over P's rows.
bool bias_like(const ir::Function& body, const ir::Node& loop, int32_t b) {
  return body.values[size_t(b)].type.rank() <= 1 && static_invariant(body, loop, b);
}

std::optional<Projection> match(const ir::Module& m, const ir::Function& f, size_t w, const ir::Node& loop,
                                const CountedLoop& c, size_t i, const std::vector<int32_t>& uses) {
  const ir::Function& body = m.functions[size_t(loop.functions[1])];
  const ir::Node& core = body.nodes[i];
  if (core.kind != ir::NodeKind::kOp || (core.op != OpId::MatMul && core.op != OpId::FullyConnected))
    return std::nullopt;
  const int32_t t = body.params[c.counter];
  const ir::Node* row = defining_node(body, core.inputs[0], i);
  if (!is_row_of(body, row, t)) return std::nullopt;
  Projection p;
  p.core = i;
  p.xs = row->inputs[0];
  p.w = core.inputs[1];
  p.result = core.outputs[0];
  const ir::Type& xs_type = body.values[size_t(p.xs)].type;
  const ir::Type& out = body.values[size_t(p.result)].type;
  if (xs_type.rank() != 2 || !xs_type.shape[1].as_static() || out.rank() != 1) return std::nullopt;
  if (body.values[size_t(p.w)].type.rank() != 2 || !static_invariant(body, loop, p.w)) return std::nullopt;
  if (core.op == OpId::FullyConnected) {
    if (!static_invariant(body, loop, core.inputs[2])) return std::nullopt;
    p.extra = {core.inputs[2]};
  }
  if (!trips_over_rows(m, f, w, loop, c, body, p.xs)) return std::nullopt;
  if (core.op != OpId::MatMul || uses[size_t(p.result)] != 1) return p;
  const std::optional<Addend> first = sole_add(body, i + 1, p.result, uses);
  if (!first || body.values[size_t(first->sum)].type != out) return p;
  // A bias added to the product alone comes along into P.
  if (bias_like(body, loop, first->other)) {
    p.add = first->node;
    p.extra = {first->other};
    p.bias_first = first->side == 1;
    p.result = first->sum;
    return p;
  }
  // So does one added to the product plus something else.
  const std::optional<Addend> second = sole_add(body, first->node + 1, first->sum, uses);
  if (second && bias_like(body, loop, second->other) &&
      body.values[size_t(second->sum)].type == out) {
    p.mid = first->node;
    p.late = second->node;
    p.extra = {second->other};
    p.bias_first = second->side == 1;
  }
  return p;
}

// The outer value for invariant body value v (a constant gets its own value here).
int32_t outer_value(ir::Function& f, const ir::Function& body, const ir::Node& loop, int32_t v) {
  const int32_t src = *invariant_source(body, loop, v);
  if (src >= 0) return src;
  const ir::Value& bv = body.values[size_t(v)];
  const int32_t nv = f.add_value(bv.type, bv.name, bv.span);
  f.values[size_t(nv)].constant = bv.constant;
  return nv;
}

ir::Node op_node(OpId op, std::vector<int32_t> in, std::vector<int32_t> out, ops::Attrs attrs, SourceSpan span) {
  ir::Node n;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attrs = std::move(attrs);
  n.span = span;
  return n;
}

// Rewrites projection p of the While at f.nodes[w]; returns how many nodes it
// inserted before the While.
size_t rewrite(ir::Module& m, size_t fi, size_t w, const CountedLoop& c, const Projection& p,
               std::vector<bool>& erase) {
  ir::Function& f = m.functions[fi];
  ir::Node& loop = f.nodes[w];
  ir::Function& cond = m.functions[size_t(loop.functions[0])];
  ir::Function& body = m.functions[size_t(loop.functions[1])];
  const ir::Node core = body.nodes[p.core];
  const ir::Type& xs_type = body.values[size_t(p.xs)].type;
  const ir::Value result = body.values[size_t(p.result)];
  const ir::Type product{result.type.dtype, {xs_type.shape[0], result.type.shape[0]}};

  std::vector<ir::Node> hoisted;
  std::vector<int32_t> in{outer_value(f, body, loop, p.xs), outer_value(f, body, loop, p.w)};
  if (core.op == OpId::FullyConnected) in.push_back(outer_value(f, body, loop, p.extra[0]));
  int32_t outer_p = f.add_value(product, result.name, core.span);
  hoisted.push_back(op_node(core.op, in, {outer_p}, core.attrs, core.span));
  if (const std::optional<size_t> add = p.add ? p.add : p.late) {
    const int32_t b = outer_value(f, body, loop, p.extra[0]);
    const int32_t sum = f.add_value(product, result.name, body.nodes[*add].span);
    hoisted.push_back(op_node(OpId::Add, p.bias_first ? std::vector{b, outer_p} : std::vector{outer_p, b}, {sum},
                              {}, body.nodes[*add].span));
    outer_p = sum;
  }

  // P becomes a carried value the body returns unchanged.
  const int32_t inner_p = body.add_value(product, result.name, core.span);
  body.params.push_back(inner_p);
  body.results.push_back(inner_p);
  cond.params.push_back(cond.add_value(product, result.name, core.span));
  loop.inputs.push_back(outer_p);
  loop.outputs.push_back(f.add_value(product, result.name, core.span));

  // row(P, t) in place of the node that produced the result.
  const size_t last = p.add ? *p.add : p.core;
  ops::Attrs row;
  row.values = {ops::AttrValue::Ints({0, 0}), ops::AttrValue::Ints({0, 0}), ops::AttrValue::Ints({1, 1}),
                ops::AttrValue::Ints({ops::attr::kIndex | ops::attr::kDynBegin, 0})};
  body.nodes[last] = op_node(OpId::Slice, {inner_p, body.params[c.counter]}, {p.result}, std::move(row),
                             body.nodes[last].span);
  if (p.add) erase[p.core] = true;
  // The add of y now gives what the add of b gave.
  if (p.late) {
    body.nodes[*p.mid].outputs = body.nodes[*p.late].outputs;
    erase[*p.late] = true;
  }

  const size_t count = hoisted.size();
  f.nodes.insert(f.nodes.begin() + std::ptrdiff_t(w), std::make_move_iterator(hoisted.begin()),
                 std::make_move_iterator(hoisted.end()));
  return count;
}

// Hoists the projections of the While at f.nodes[w]; returns the nodes inserted.
size_t hoist_loop(ir::Module& m, size_t fi, size_t w) {
  const ir::Node loop = m.functions[fi].nodes[w];
  const std::optional<CountedLoop> c = counted_loop(m, m.functions[fi], loop);
  if (!c) return 0;
  const size_t body_id = size_t(loop.functions[1]);
  const std::vector<int32_t> uses = count_uses(m.functions[body_id]);
  std::vector<Projection> found;
  std::vector<bool> taken(m.functions[body_id].nodes.size(), false);
  for (size_t i = 0; i < m.functions[body_id].nodes.size(); ++i) {
    if (taken[i]) continue;
    const ir::Node current = m.functions[fi].nodes[w];
    if (std::optional<Projection> p = match(m, m.functions[fi], w, current, *c, i, uses)) {
      for (std::optional<size_t> n : {p->add, p->mid, p->late})
        if (n) taken[*n] = true;
      found.push_back(*p);
    }
  }
  if (found.empty()) return 0;
  std::vector<bool> erase(m.functions[body_id].nodes.size(), false);
  size_t inserted = 0;
  for (const Projection& p : found) inserted += rewrite(m, fi, w + inserted, *c, p, erase);
  erase_nodes(m.functions[body_id], erase);
  return inserted;
}

}  // namespace

bool hoist_row_projections(ir::Module& m) {
  return rewrite_sole_user_whiles(m, [&](size_t fi, size_t w) { return hoist_loop(m, fi, w); });
}

}  // namespace sg::compiler::passes
