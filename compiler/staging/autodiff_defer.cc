// A reverse loop's weight gradients, deferred to one product after the loop (see
// Vjp::Deferred). For the rnn cell h = tanh(x W + h U + b), the backward's
// per-step dU += h_t^T g_t writes a 256 x 256 accumulator every step; keeping the rows
// h_t and g_t (1 KiB each) and computing H^T G once after the loop turns T rank-1
// updates, bound by memory, into one GEMM. The sum runs in another order, so the result
// differs from the accumulated one by rounding only.
#include "staging/autodiff_internal.h"

namespace sg::compiler::staging::autodiff_detail {

namespace {

const ir::Node* producer(const ir::Function& f, int32_t v) {
  for (const ir::Node& n : f.nodes)
    for (int32_t o : n.outputs)
      if (o == v) return &n;
  return nullptr;
}

size_t uses(const ir::Function& f, int32_t v) {
  size_t count = 0;
  for (const ir::Node& n : f.nodes) count += size_t(std::count(n.inputs.begin(), n.inputs.end(), v));
  return count + size_t(std::count(f.results.begin(), f.results.end(), v));
}

bool is_op(const ir::Node* n, OpId op) { return n != nullptr && n->kind == ir::NodeKind::kOp && n->op == op; }

}  // namespace

std::vector<Vjp::Deferred> Vjp::defer_products(const std::vector<bool>& invariant, std::vector<int32_t>& results,
                                               const std::vector<int32_t>& p) {
  std::vector<Deferred> out;
  std::vector<std::pair<int32_t, int32_t>> rows;  // per deferred: P^T and Q, [B, K] and [B, N]
  ir::Function& f = s_.fn();
  for (size_t k = 0; k < invariant.size(); ++k) {
    if (!invariant[k]) continue;
    const int32_t acc = p[1 + k], result = results[1 + k];
    const ir::Node* add = producer(f, result);
    if (!is_op(add, OpId::Add) || add->inputs.size() != 2 || uses(f, acc) != 1) continue;
    const int32_t term = add->inputs[0] == acc ? add->inputs[1] : add->inputs[1] == acc ? add->inputs[0] : -1;
    if (term < 0 || uses(f, term) != 1 || !(f.values[size_t(term)].type == f.values[size_t(acc)].type)) continue;
    const ir::Node* mm = producer(f, term);
    if (!is_op(mm, OpId::MatMul)) continue;
    const ir::Type& pt = f.values[size_t(mm->inputs[0])].type;
    const ir::Type& qt = f.values[size_t(mm->inputs[1])].type;
    const ir::Type& at = f.values[size_t(acc)].type;
    if (pt.rank() != 2 || qt.rank() != 2 || at.rank() != 2 || !at.shape[0].as_static() || !at.shape[1].as_static())
      continue;
    // P^T: the operand P transposes, where it is a transpose (as the matmul rule makes it).
    const ir::Node* t = producer(f, mm->inputs[0]);
    const bool transposed = is_op(t, OpId::Transpose) && t->attrs.ints(0) == std::vector<int64_t>{1, 0};
    const int32_t a_rows = transposed ? t->inputs[0] : s_.materialize(transpose(s_.staged(mm->inputs[0]), {1, 0}), span_);
    const int32_t b_rows = mm->inputs[1];
    Deferred d;
    d.k = k;
    const ir::Dim rows_dim = ir::Dim::symbol(s_.module().symbols.fresh("T"));
    d.rows_a = ir::Type{at.dtype, {rows_dim, at.shape[0]}};
    d.rows_b = ir::Type{at.dtype, {rows_dim, at.shape[1]}};
    results[1 + k] = acc;
    out.push_back(std::move(d));
    rows.emplace_back(a_rows, b_rows);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const std::array<std::pair<const ir::Type*, int32_t>, 2> lists{{{&out[i].rows_a, rows[i].first},
                                                                    {&out[i].rows_b, rows[i].second}}};
    for (const auto& [type, item] : lists) {
      const int32_t param = s_.fn().add_value(*type, "", span_);
      s_.fn().params.push_back(param);
      Args a;
      a.pos = {make_tuple({s_.staged(param), s_.staged(item)})};
      a.span = span_;
      const int32_t grown = s_.materialize(s_.call_sg("concatenate", a), span_);
      s_.fn().values[size_t(grown)].type = *type;
      results.push_back(grown);
    }
  }
  return out;
}

void Vjp::carry_deferred(const std::vector<Deferred>& deferred, int32_t cond, std::vector<int32_t>& init,
                         std::vector<ir::Type>& types) {
  for (const Deferred& d : deferred)
    for (const ir::Type* t : {&d.rows_a, &d.rows_b}) {
      ir::Function& c = s_.module().functions[size_t(cond)];
      c.params.push_back(c.add_value(*t, "", span_));
      Args a;
      a.pos = {make_tuple({Value(int64_t(0)), Value(*t->shape[1].as_static())})};
      a.kw.emplace_back("dtype", Value(DTypeV{t->dtype}));
      a.span = span_;
      init.push_back(s_.materialize(s_.call_sg("zeros", a), span_));
      types.push_back(*t);
    }
}

Value Vjp::finish_deferred(const Value& accumulated, int32_t rows_a, int32_t rows_b) {
  const Value product = s_.apply(OpId::MatMul, {}, {transpose(s_.staged(rows_a), {1, 0}), s_.staged(rows_b)}, span_);
  return add(accumulated, product);
}

}  // namespace sg::compiler::staging::autodiff_detail
