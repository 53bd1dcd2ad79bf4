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


// ---- through a closure's recursion ------------------------------------------------
// tree_rnn's backward adds h_left^T dz to dA at every internal node, 127 rank-1
// updates of a 64 x 64 accumulator threaded through the recursion; here each
// member's backward appends h_left and dz to two lists instead, and one GEMM after
// the root's backward adds H_left^T DZ. A gradient is deferred only where every Call
// and If of a member's backward hands it on unchanged but for such sums, from the
// member's handed parameter to its result, so each list adds to one root gradient.

namespace {

constexpr size_t kResult = SIZE_MAX;  // a use site that is a function result

// Where value v of f is read: (node, input) or (kResult, result index).
std::vector<std::pair<size_t, size_t>> use_sites(const ir::Function& f, int32_t v) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t n = 0; n < f.nodes.size(); ++n)
    for (size_t i = 0; i < f.nodes[n].inputs.size(); ++i)
      if (f.nodes[n].inputs[i] == v) out.emplace_back(n, i);
  for (size_t r = 0; r < f.results.size(); ++r)
    if (f.results[r] == v) out.emplace_back(kResult, r);
  return out;
}

struct Layout {
  size_t handed = 0, count = 0;  // the first handed gradient parameter; how many
};

Layout layout_of(const ir::Module& m, const Closure::Member& member) {
  const auto& [f, params, results] = member.key;
  Layout l;
  l.handed = m.functions[size_t(f)].params.size() + size_t(std::count(results.begin(), results.end(), true));
  l.count = size_t(std::count(params.begin(), params.end(), true));
  return l;
}

using Term = Closure::DeferredTerm;

// One gradient's path through a member's backward.
struct Chain {
  bool ok = false;
  std::vector<Term> terms;
  std::vector<std::pair<size_t, size_t>> edges;  // (child member, its slot)
};

// A bias's term: a vector of static length added to its gradient as it is.
bool summable(const ir::Function& f, int32_t term, int32_t acc) {
  const ir::Type& at = f.values[size_t(acc)].type;
  return f.values[size_t(term)].type == at && at.rank() == 1 && at.shape[0].as_static() && is_float(at.dtype);
}

bool deferrable(const ir::Function& f, int32_t term, int32_t acc) {
  if (uses(f, term) != 1 || !(f.values[size_t(term)].type == f.values[size_t(acc)].type)) return false;
  const ir::Node* mm = producer(f, term);
  if (!is_op(mm, OpId::MatMul)) return false;
  const ir::Type& at = f.values[size_t(acc)].type;
  return f.values[size_t(mm->inputs[0])].type.rank() == 2 && f.values[size_t(mm->inputs[1])].type.rank() == 2 &&
         at.rank() == 2 && at.shape[0].as_static() && at.shape[1].as_static();
}

// The rows a term appends to its Q list, as a value to compare: a bias's vector, or
// the vector a product's Q expands (expand_dims on axis 0), or Q itself.
int32_t q_rows(const ir::Function& f, const Closure::DeferredTerm& t) {
  if (t.sum) return t.term;
  const int32_t q = producer(f, t.term)->inputs[1];
  const ir::Node* e = producer(f, q);
  if (is_op(e, OpId::ExpandDims) && e->attrs.ints(0) == std::vector<int64_t>{0}) return e->inputs[0];
  return q;
}

// v == w, or both made by one op from the same inputs (each product's rule expands
// the shared cotangent on its own; CSE merges them only later).
bool same_value(const ir::Function& f, int32_t v, int32_t w) {
  if (v == w) return true;
  const ir::Node* a = producer(f, v);
  const ir::Node* b = producer(f, w);
  return a != nullptr && b != nullptr && a->kind == ir::NodeKind::kOp && b->kind == ir::NodeKind::kOp &&
         a->op == b->op && a->attrs == b->attrs && a->inputs == b->inputs && a->outputs.size() == 1;
}

Chain follow(const ir::Function& b, const std::map<int32_t, size_t>& member_of, const std::vector<Layout>& layouts,
             size_t handed, size_t slot) {
  Chain c;
  int32_t cur = b.params[handed + slot];
  for (size_t step = 0; step <= b.nodes.size(); ++step) {
    const auto sites = use_sites(b, cur);
    if (sites.size() != 1) return c;
    const auto [n, i] = sites[0];
    if (n == kResult) {
      c.ok = i == slot;
      return c;
    }
    const ir::Node& node = b.nodes[n];
    if (is_op(&node, OpId::Add) && node.inputs.size() == 2 &&
        b.values[size_t(node.outputs[0])].type == b.values[size_t(cur)].type) {
      const int32_t other = node.inputs[1 - i];
      if (deferrable(b, other, cur)) c.terms.push_back({n, cur, other, 0, false});
      else if (summable(b, other, cur)) c.terms.push_back({n, cur, other, 0, true});
      cur = node.outputs[0];
      continue;
    }
    if (node.kind == ir::NodeKind::kOp || node.kind == ir::NodeKind::kWhile || !member_of.count(node.functions[0]))
      return c;
    const size_t first = node.kind == ir::NodeKind::kIf ? 1 : 0;
    if (i < first) return c;
    size_t s = 0;
    for (int32_t fn : node.functions) {
      const size_t child = member_of.at(fn);
      if (i - first < layouts[child].handed || i - first >= layouts[child].handed + layouts[child].count) return c;
      s = i - first - layouts[child].handed;
      c.edges.emplace_back(child, s);
    }
    cur = node.outputs[s];
  }
  return c;
}

// The first node of b that calls a member's backward, or the node count.
size_t first_call(const ir::Function& b, const std::map<int32_t, size_t>& member_of) {
  for (size_t n = 0; n < b.nodes.size(); ++n)
    if (b.nodes[n].kind != ir::NodeKind::kOp && b.nodes[n].kind != ir::NodeKind::kWhile &&
        member_of.count(b.nodes[n].functions[0]))
      return n;
  return b.nodes.size();
}

// Whether value v of b is a parameter or made by a node before `limit`.
bool defined_before(const ir::Function& b, int32_t v, size_t limit) {
  if (std::find(b.params.begin(), b.params.end(), v) != b.params.end() || b.values[size_t(v)].constant >= 0)
    return true;
  for (size_t n = 0; n < limit; ++n)
    for (int32_t o : b.nodes[n].outputs)
      if (o == v) return true;
  return false;
}

// The values a term appends: P's rows (unless from a tape) and Q's.
std::vector<int32_t> term_rows(const ir::Function& b, const Closure::DeferredTerm& t) {
  if (t.sum) return {t.term};
  const ir::Node* mm = producer(b, t.term);
  return {mm->inputs[0], mm->inputs[1]};
}

// The tape P's rows come from: mm = matmul(transpose(expand_dims(slice(tape, row))), Q)
// with Q one row, the slice the member's read of its residual at its row; the
// tapes are b's parameters from `first_tape` on.
size_t tape_of(const ir::Function& b, const Closure::DeferredTerm& t, int32_t row, size_t first_tape, size_t tapes) {
  if (t.sum) return Closure::kNoRows;
  const ir::Node* mm = producer(b, t.term);
  const ir::Node* tr = producer(b, mm->inputs[0]);
  const ir::Type& q = b.values[size_t(mm->inputs[1])].type;
  if (!is_op(tr, OpId::Transpose) || q.rank() != 2 || q.shape[0].as_static() != 1) return Closure::kNoRows;
  const ir::Node* e = producer(b, tr->inputs[0]);
  if (!is_op(e, OpId::ExpandDims) || e->attrs.ints(0) != std::vector<int64_t>{0}) return Closure::kNoRows;
  const ir::Node* s = producer(b, e->inputs[0]);
  if (row < 0 || !is_op(s, OpId::Slice) || s->inputs.size() != 2 || s->inputs[1] != row) return Closure::kNoRows;
  for (size_t k = 0; k < tapes; ++k)
    if (s->inputs[0] == b.params[first_tape + k]) return k;
  return Closure::kNoRows;
}

}  // namespace

void Vjp::defer_closure_products(Closure& c) {
  ir::Module& mod = s_.module();
  std::map<int32_t, size_t> member_of;  // backward function -> member
  std::vector<Layout> layouts;
  for (size_t k = 0; k < c.members.size(); ++k) {
    member_of[c.members[k].backward] = k;
    layouts.push_back(layout_of(mod, c.members[k]));
    if (mod.functions[size_t(c.members[k].backward)].results.size() != layouts[k].count + c.counters) return;
  }
  // Every slot's chain, and how many Calls and Ifs hand each slot its gradient.
  std::map<std::pair<size_t, size_t>, Chain> chains;
  std::map<std::pair<size_t, size_t>, size_t> sites, chained;
  for (size_t k = 0; k < c.members.size(); ++k) {
    const ir::Function& b = mod.functions[size_t(c.members[k].backward)];
    for (size_t s = 0; s < layouts[k].count; ++s) chains[{k, s}] = follow(b, member_of, layouts, layouts[k].handed, s);
    for (const ir::Node& node : b.nodes)
      if (node.kind != ir::NodeKind::kOp && node.kind != ir::NodeKind::kWhile && member_of.count(node.functions[0]))
        for (int32_t fn : node.functions)
          for (size_t s = 0; s < layouts[member_of.at(fn)].count; ++s) ++sites[{member_of.at(fn), s}];
  }
  // The root gradient each slot adds to, from the root's caller down the chains.
  std::map<std::pair<size_t, size_t>, size_t> root;
  std::set<size_t> bad;
  std::vector<std::pair<size_t, size_t>> work;
  for (size_t s = 0; s < layouts[0].count; ++s) {
    root[{0, s}] = s;
    work.emplace_back(0, s);
  }
  while (!work.empty()) {
    const auto at = work.back();
    work.pop_back();
    const size_t r = root.at(at);
    if (!chains.at(at).ok) bad.insert(r);
    for (const auto& e : chains.at(at).edges) {
      ++chained[e];
      auto [it, fresh] = root.emplace(e, r);
      if (fresh) work.push_back(e);
      else if (it->second != r) bad.insert({r, it->second});
    }
  }
  for (const auto& [at, r] : root)
    if (sites[at] != chained[at]) bad.insert(r);  // some Call hands it another gradient
  // Each member's deferred terms: the add bypassed, P's and Q's rows appended.
  std::vector<std::vector<Term>> owned(c.members.size());
  for (const auto& [at, r] : root) {
    if (bad.count(r)) continue;
    const ir::Function& b = mod.functions[size_t(c.members[at.first].backward)];
    for (Term t : chains.at(at).terms) {
      const ir::Type& acc = b.values[size_t(t.acc)].type;
      auto list = [&](const ir::Dim& dim) {
        c.row_lists.push_back(ir::Type{acc.dtype, {ir::Dim::symbol(mod.symbols.fresh("T")), dim}});
        return c.row_lists.size() - 1;
      };
      Closure::DeferredRows d{r, t.sum ? Closure::kNoRows : list(acc.shape[0]), SIZE_MAX};
      for (const Term& other : owned[at.first])
        if (same_value(b, q_rows(b, other), q_rows(b, t))) d.rows_b = c.deferred[other.product].rows_b;
      if (d.rows_b == SIZE_MAX) d.rows_b = list(acc.shape[t.sum ? 0 : 1]);
      t.product = c.deferred.size();
      c.deferred.push_back(d);
      owned[at.first].push_back(t);
    }
  }
  if (c.deferred.empty()) return;
  // Appending before the Calls keeps each list in the reverse order of the tapes,
  // where every row a member appends is made before its first Call.
  c.rows_before_calls = true;
  for (size_t k = 0; k < c.members.size(); ++k) {
    const ir::Function& b = mod.functions[size_t(c.members[k].backward)];
    const size_t limit = first_call(b, member_of);
    for (const Term& t : owned[k])
      for (int32_t v : term_rows(b, t)) c.rows_before_calls = c.rows_before_calls && defined_before(b, v, limit);
  }
  if (c.rows_before_calls)
    for (size_t k = 0; k < c.members.size(); ++k) {
      const ir::Function& b = mod.functions[size_t(c.members[k].backward)];
      const size_t first_tape = layouts[k].handed + layouts[k].count + c.counters;
      for (const Term& t : owned[k]) {
        Closure::DeferredRows& d = c.deferred[t.product];
        const size_t tape = tape_of(b, t, c.members[k].row, first_tape, c.tapes.size());
        bool alone = true;  // its P list is its own (P lists are never shared)
        for (const Term& u : owned[k]) alone = alone && (u.product == t.product || c.deferred[u.product].rows_a != d.rows_a);
        if (tape != Closure::kNoRows && alone) {
          d.tape = tape;
          d.rows_a = Closure::kNoRows;
        }
      }
    }
  // The lists still read (a tape replaced its P list): renumbered densely.
  std::vector<size_t> renumber(c.row_lists.size(), Closure::kNoRows);
  std::vector<ir::Type> kept;
  for (Closure::DeferredRows& d : c.deferred)
    for (size_t* l : {&d.rows_a, &d.rows_b}) {
      if (*l == Closure::kNoRows) continue;
      if (renumber[*l] == Closure::kNoRows) {
        renumber[*l] = kept.size();
        kept.push_back(c.row_lists[*l]);
      }
      *l = renumber[*l];
    }
  c.row_lists = std::move(kept);
  for (size_t k = 0; k < c.members.size(); ++k) thread_deferred(c, k, owned[k], member_of);
}

void Vjp::thread_deferred(const Closure& c, size_t k, const std::vector<Closure::DeferredTerm>& terms,
                          const std::map<int32_t, size_t>& member_of) {
  FnBuilder bb;
  bb.fn = c.members[k].backward;
  FnBuilder* saved = s_.builder();
  s_.set_builder(&bb);
  span_ = call_span_;
  for (const Term& t : terms) {
    const int32_t sum = s_.fn().nodes[t.add].outputs[0];
    for (ir::Node& node : s_.fn().nodes)
      for (int32_t& v : node.inputs)
        if (v == sum) v = t.acc;
    for (int32_t& v : s_.fn().results)
      if (v == sum) v = t.acc;
  }
  std::vector<int32_t> lists;
  for (const ir::Type& t : c.row_lists) {
    lists.push_back(s_.fn().add_value(t, "", span_));
    s_.fn().params.push_back(lists.back());
  }
  if (c.rows_before_calls) {  // the appends, made at the end, go before the first Call
    const size_t at = first_call(s_.fn(), member_of), before = s_.fn().nodes.size();
    append_rows(c, terms, lists);
    std::vector<ir::Node>& nodes = s_.fn().nodes;
    std::rotate(nodes.begin() + std::ptrdiff_t(at), nodes.begin() + std::ptrdiff_t(before), nodes.end());
  }
  for (size_t n = 0; n < s_.fn().nodes.size(); ++n) {
    ir::Node& node = s_.fn().nodes[n];
    if (node.kind == ir::NodeKind::kOp || node.kind == ir::NodeKind::kWhile || !member_of.count(node.functions[0]))
      continue;
    node.inputs.insert(node.inputs.end(), lists.begin(), lists.end());
    for (int32_t& l : lists) {
      const ir::Value v = s_.fn().values[size_t(l)];
      l = s_.fn().add_value(v.type, "", span_);
      s_.fn().nodes[n].outputs.push_back(l);
    }
  }
  if (!c.rows_before_calls) append_rows(c, terms, lists);
  s_.fn().results.insert(s_.fn().results.end(), lists.begin(), lists.end());
  s_.set_builder(saved);
}

void Vjp::append_rows(const Closure& c, const std::vector<Closure::DeferredTerm>& terms, std::vector<int32_t>& lists) {
  std::set<size_t> appended;
  for (const Term& t : terms) {
    const Closure::DeferredRows& d = c.deferred[t.product];
    int32_t a_rows = -1, b_rows = -1;
    if (t.sum) {
      if (!appended.count(d.rows_b)) b_rows = s_.materialize(expand(s_.staged(t.term), {0}), span_);
    } else {
      const ir::Node mm = *producer(s_.fn(), t.term);
      const ir::Node* tr = producer(s_.fn(), mm.inputs[0]);
      const bool transposed = is_op(tr, OpId::Transpose) && tr->attrs.ints(0) == std::vector<int64_t>{1, 0};
      a_rows = transposed ? tr->inputs[0] : s_.materialize(transpose(s_.staged(mm.inputs[0]), {1, 0}), span_);
      b_rows = mm.inputs[1];
    }
    for (const auto& [list, rows] : {std::pair{d.rows_a, a_rows}, std::pair{d.rows_b, b_rows}}) {
      if (list == Closure::kNoRows || !appended.insert(list).second) continue;
      Args a;
      a.pos = {make_tuple({s_.staged(lists[list]), s_.staged(rows)})};
      a.span = span_;
      lists[list] = s_.materialize(s_.call_sg("concatenate", a), span_);
      s_.fn().values[size_t(lists[list])].type = c.row_lists[list];
    }
  }
}

}  // namespace sg::compiler::staging::autodiff_detail
