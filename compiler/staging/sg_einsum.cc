// sg.einsum(subscripts, *operands): NumPy's, with static subscripts (implicit
// output and '...' included), lowered at staging time; there is no einsum kernel.
// Each operand first takes its diagonals (a repeated subscript: a where over an
// arange == arange mask, then a sum) and sums the subscripts no one else needs;
// then the operands are contracted left to right (or in the pairs `optimize` names:
// an explicit np.einsum_path path, or one chosen from the subscripts alone, as eager
// mode's _greedy_path does), each pair by one batched
// matmul ([batch..., M, K] @ [batch..., K, N], groups merged by reshapes) or, with
// nothing to contract, by a broadcasting multiply; a last transpose gives the
// output order. Ints keep their dtype (sums are cast back), bools compute as i64
// and give `!= 0`.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "staging/sg_ops_everyday.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

// A subscript: a letter's character code, or kEllipsis + k for the k-th of the
// broadcast dims '...' stands for (counted from the left of the widest).
using Label = int;
constexpr Label kEllipsis = 1000;

struct Term {
  Value t;
  std::vector<Label> labels;  // one per axis of t
  SourceSpan span;
};

// einsum's optimize=: left to right (False), pairs from the subscripts (True,
// 'greedy', 'optimal'), or the pairs of an explicit path.
struct Optimize {
  enum class Kind { kLeft, kGreedy, kExplicit } kind = Kind::kLeft;
  std::vector<std::pair<size_t, size_t>> pairs;
};

// Pairs that share a subscript first, then the smallest rank of the product, then
// the leftmost pair; each pair leaves the list and its product joins the end.
std::vector<std::pair<size_t, size_t>> greedy_path(std::vector<std::set<Label>> ls, const std::set<Label>& out) {
  std::vector<std::pair<size_t, size_t>> pairs;
  while (ls.size() > 1) {
    std::tuple<int, size_t, size_t, size_t> best{2, 0, 0, 0};
    std::set<Label> best_res;
    for (size_t i = 0; i < ls.size(); ++i)
      for (size_t j = i + 1; j < ls.size(); ++j) {
        std::set<Label> others = out, res;
        for (size_t k = 0; k < ls.size(); ++k)
          if (k != i && k != j) others.insert(ls[k].begin(), ls[k].end());
        bool share = false;
        for (Label l : ls[i]) share = share || ls[j].count(l);
        for (const auto* side : {&ls[i], &ls[j]})
          for (Label l : *side)
            if (others.count(l)) res.insert(l);
        const std::tuple<int, size_t, size_t, size_t> cost{share ? 0 : 1, res.size(), i, j};
        if (cost < best) best = cost, best_res = std::move(res);
      }
    const size_t i = std::get<2>(best), j = std::get<3>(best);
    pairs.emplace_back(i, j);
    ls.erase(ls.begin() + long(j));
    ls.erase(ls.begin() + long(i));
    ls.push_back(std::move(best_res));
  }
  return pairs;
}

std::string label_text(Label l) {
  return l >= kEllipsis ? "'...' dim " + std::to_string(l - kEllipsis) : std::string("'") + char(l) + "'";
}

class Einsum {
 public:
  Einsum(Stager& s, SourceSpan span) : s_(s), span_(span) {}

  Value run(const std::string& subscripts, std::vector<Term> terms, SourceSpan sub_span, const Optimize& opt) {
    parse(subscripts, terms, sub_span);
    check_sizes(terms);
    DType dtype = s_.tensor_dtype(terms[0].t);
    for (size_t k = 1; k < terms.size(); ++k)
      if (s_.tensor_dtype(terms[k].t) != dtype)
        s_.fail(terms[k].span, "einsum: operand " + std::to_string(k) + " is " + dtype_name(s_.tensor_dtype(terms[k].t)) +
                                   " and operand 0 " + dtype_name(dtype) + "; cast with astype");
    for (Term& t : terms)
      if (dtype == DType::kBool) t.t = s_.cast(t.t, DType::kI64, span_);
    // Each operand alone: diagonals, then the sums of subscripts no one else has.
    for (size_t k = 0; k < terms.size(); ++k) {
      take_diagonals(terms[k]);
      std::set<Label> keep(output_.begin(), output_.end());
      for (size_t j = 0; j < terms.size(); ++j)
        if (j != k) keep.insert(terms[j].labels.begin(), terms[j].labels.end());
      sum_out(terms[k], keep);
    }
    Term acc = contract_all(std::move(terms), opt);
    sum_out(acc, std::set<Label>(output_.begin(), output_.end()));
    std::vector<int64_t> perm;
    for (Label l : output_) perm.push_back(int64_t(std::find(acc.labels.begin(), acc.labels.end(), l) - acc.labels.begin()));
    Value r = acc.t;
    if (!is_identity(perm)) r = transpose(s_, r, perm_value(perm), span_);
    if (dtype == DType::kBool) return s_.tensor_binary(ops::OpId::NotEqual, r, Value(int64_t(0)), span_);
    if (s_.tensor_dtype(r) != dtype) r = s_.cast(r, dtype, span_);
    return r;
  }

 private:
  Term contract_all(std::vector<Term> terms, const Optimize& opt) {
    if (opt.kind == Optimize::Kind::kLeft) {
      Term acc = terms[0];
      for (size_t k = 1; k < terms.size(); ++k) {
        std::set<Label> keep(output_.begin(), output_.end());
        for (size_t j = k + 1; j < terms.size(); ++j) keep.insert(terms[j].labels.begin(), terms[j].labels.end());
        acc = contract(acc, terms[k], keep);
      }
      return acc;
    }
    std::vector<std::pair<size_t, size_t>> path = opt.pairs;
    if (opt.kind == Optimize::Kind::kGreedy) {
      std::vector<std::set<Label>> ls;
      for (const Term& t : terms) ls.emplace_back(t.labels.begin(), t.labels.end());
      path = greedy_path(std::move(ls), std::set<Label>(output_.begin(), output_.end()));
    }
    for (const auto& [i, j] : path) {
      std::vector<Term> rest;
      std::set<Label> keep(output_.begin(), output_.end());
      for (size_t k = 0; k < terms.size(); ++k)
        if (k != i && k != j) {
          keep.insert(terms[k].labels.begin(), terms[k].labels.end());
          rest.push_back(terms[k]);
        }
      rest.push_back(contract(terms[i], terms[j], keep));
      terms = std::move(rest);
    }
    return terms[0];
  }

  // Fills each term's labels and output_, checking the subscripts against the ranks.
  void parse(const std::string& text, std::vector<Term>& terms, SourceSpan sub_span) {
    std::string spec;
    for (char c : text)
      if (c != ' ') spec += c;
    const size_t arrow = spec.find("->");
    const std::string inputs = spec.substr(0, arrow);
    std::vector<std::string> parts{""};
    for (char c : inputs) {
      if (c == ',') parts.emplace_back();
      else parts.back() += c;
    }
    if (parts.size() != terms.size())
      s_.fail(sub_span, "einsum: the subscripts name " + std::to_string(parts.size()) + " operands, but " +
                            std::to_string(terms.size()) + " were given");
    size_t widest = 0;
    std::vector<size_t> spans(terms.size(), 0);
    std::vector<bool> has_dots(terms.size(), false);
    for (size_t k = 0; k < terms.size(); ++k) {
      const std::string& p = parts[k];
      const size_t dots = p.find("...");
      has_dots[k] = dots != std::string::npos;
      const size_t letters = p.size() - (has_dots[k] ? 3 : 0);
      const size_t rank = s_.tensor_rank(terms[k].t);
      if (has_dots[k] ? letters > rank : letters != rank)
        s_.fail(terms[k].span, "einsum: operand " + std::to_string(k) + " has rank " + std::to_string(rank) +
                                   " but its subscripts '" + p + "' name " + std::to_string(letters) + " axes");
      spans[k] = rank - letters;
      widest = std::max(widest, spans[k]);
    }
    std::map<Label, int> count;
    for (size_t k = 0; k < terms.size(); ++k) {
      const std::string& p = parts[k];
      for (size_t i = 0; i < p.size(); ++i) {
        if (p.compare(i, 3, "...") == 0) {
          for (size_t j = 0; j < spans[k]; ++j) terms[k].labels.push_back(kEllipsis + Label(widest - spans[k] + j));
          i += 2;
          continue;
        }
        if (!std::isalpha(static_cast<unsigned char>(p[i])))
          s_.fail(sub_span, std::string("einsum: '") + p[i] + "' is not a valid subscript (letters and '...' only)");
        terms[k].labels.push_back(Label(p[i]));
        count[Label(p[i])]++;
      }
    }
    if (arrow == std::string::npos) {  // implicit: '...', then the letters met once, in ASCII order
      for (size_t j = 0; j < widest; ++j) output_.push_back(kEllipsis + Label(j));
      for (const auto& [l, c] : count)
        if (c == 1) output_.push_back(l);
      return;
    }
    const std::string out = spec.substr(arrow + 2);
    bool dots = false;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out.compare(i, 3, "...") == 0) {
        for (size_t j = 0; j < widest; ++j) output_.push_back(kEllipsis + Label(j));
        dots = true;
        i += 2;
        continue;
      }
      const Label l = Label(out[i]);
      if (!std::isalpha(static_cast<unsigned char>(out[i])))
        s_.fail(sub_span, std::string("einsum: '") + out[i] + "' is not a valid output subscript");
      if (!count.count(l))
        s_.fail(sub_span, std::string("einsum: output subscript '") + out[i] + "' is not among the operands' subscripts");
      if (std::find(output_.begin(), output_.end(), l) != output_.end())
        s_.fail(sub_span, std::string("einsum: output subscript '") + out[i] + "' appears more than once");
      output_.push_back(l);
    }
    if (!dots && widest > 0)
      s_.fail(sub_span, "einsum: the operands have dims under '...' but the output subscripts have no '...'");
  }

  // Static sizes of one subscript must agree (or be 1, which broadcasts).
  void check_sizes(const std::vector<Term>& terms) {
    std::map<Label, std::pair<int64_t, size_t>> seen;  // size, operand
    for (size_t k = 0; k < terms.size(); ++k) {
      const ir::Type t = s_.tensor_type(terms[k].t);
      for (size_t i = 0; i < t.rank(); ++i) {
        const std::optional<int64_t> n = t.shape[i].as_static();
        if (!n) continue;
        const Label l = terms[k].labels[i];
        auto it = seen.find(l);
        if (it == seen.end() || it->second.first == 1) {
          seen[l] = {*n, k};
          continue;
        }
        const bool same_operand = it->second.second == k;
        if (*n != it->second.first && (*n != 1 || same_operand))
          s_.fail(terms[k].span, "einsum: subscript " + label_text(l) + " has size " + std::to_string(*n) + " in operand " +
                                     std::to_string(k) + " but " + std::to_string(it->second.first) + " in operand " +
                                     std::to_string(it->second.second));
      }
    }
  }

  Value ints_value(const std::vector<int64_t>& v) {
    std::vector<Value> items;
    for (int64_t i : v) items.push_back(Value(i));
    return make_tuple(items);
  }
  Value perm_value(const std::vector<int64_t>& p) { return ints_value(p); }
  static bool is_identity(const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] != int64_t(i)) return false;
    return true;
  }
  Value dim(const Value& t, size_t axis) { return s_.shape_item(t, int64_t(axis), span_); }

  // A repeated subscript at axes p < q keeps their diagonal, at p.
  void take_diagonals(Term& term) {
    for (size_t p = 0; p < term.labels.size(); ++p) {
      for (size_t q = p + 1; q < term.labels.size();) {
        if (term.labels[q] != term.labels[p]) {
          ++q;
          continue;
        }
        const size_t rank = term.labels.size();
        Args ar;
        ar.pos = {dim(term.t, p)};
        ar.span = span_;
        const Value idx = s_.call_sg("arange", ar);
        std::vector<Value> sp(rank, Value(int64_t(1))), sq(rank, Value(int64_t(1)));
        sp[p] = Value(int64_t(-1));
        sq[q] = Value(int64_t(-1));
        const Value mask = s_.tensor_binary(ops::OpId::Equal, reshape(s_, idx, make_tuple(sp), span_),
                                            reshape(s_, idx, make_tuple(sq), span_), span_);
        Args w;
        w.pos = {mask, term.t, Value(int64_t(0))};
        w.span = span_;
        const Value kept = s_.call_sg("where", w);
        term.t = sum(kept, Value(int64_t(q)));
        term.labels.erase(term.labels.begin() + std::ptrdiff_t(q));
      }
    }
  }

  // A sum that keeps t's dtype (an i32 sum is i64, SPEC §3; einsum's is i32, NumPy's).
  Value sum(const Value& t, const Value& axes) {
    const Value r = reduce(s_, ops::OpId::Sum, t, axes, false, span_);
    return s_.tensor_dtype(r) == s_.tensor_dtype(t) ? r : s_.cast(r, s_.tensor_dtype(t), span_);
  }

  void sum_out(Term& term, const std::set<Label>& keep) {
    std::vector<Value> axes;
    std::vector<Label> left;
    for (size_t i = 0; i < term.labels.size(); ++i) {
      if (keep.count(term.labels[i])) left.push_back(term.labels[i]);
      else axes.push_back(Value(int64_t(i)));
    }
    if (axes.empty()) return;
    term.t = sum(term.t, make_tuple(axes));
    term.labels = left;
  }

  static size_t index_of(const std::vector<Label>& ls, Label l) {
    return size_t(std::find(ls.begin(), ls.end(), l) - ls.begin());
  }

  // `t` with its axes in the order of `order`'s labels (all of them present).
  Value arrange(const Term& t, const std::vector<Label>& order) {
    std::vector<int64_t> perm;
    for (Label l : order) perm.push_back(int64_t(index_of(t.labels, l)));
    return is_identity(perm) ? t.t : transpose(s_, t.t, perm_value(perm), span_);
  }

  // The product of the dims of `t` at axes [from, to) (1 for none).
  Value group_size(const Value& t, size_t from, size_t to) {
    Value r = Value(int64_t(1));
    for (size_t i = from; i < to; ++i) r = s_.binary(BinOp::kMul, r, dim(t, i), span_);
    return r;
  }

  Term contract(Term a, Term b, const std::set<Label>& keep) {
    std::set<Label> need = keep;
    need.insert(b.labels.begin(), b.labels.end());
    sum_out(a, need);
    need = keep;
    need.insert(a.labels.begin(), a.labels.end());
    sum_out(b, need);
    std::vector<Label> batch, a_only, b_only, summed;
    for (Label l : a.labels) {
      const bool in_b = index_of(b.labels, l) < b.labels.size();
      if (in_b && keep.count(l)) batch.push_back(l);
      else if (in_b) summed.push_back(l);
      else a_only.push_back(l);
    }
    for (Label l : b.labels)
      if (index_of(a.labels, l) == a.labels.size()) b_only.push_back(l);
    Term r;
    r.labels = batch;
    r.labels.insert(r.labels.end(), a_only.begin(), a_only.end());
    r.labels.insert(r.labels.end(), b_only.begin(), b_only.end());
    const size_t nb = batch.size(), na = a_only.size(), nc = summed.size(), nn = b_only.size();
    if (summed.empty()) {  // a broadcasting product: [batch, a, 1...] * [batch, 1..., b]
      std::vector<Label> ao = batch, bo = batch;
      ao.insert(ao.end(), a_only.begin(), a_only.end());
      bo.insert(bo.end(), b_only.begin(), b_only.end());
      Value x = arrange(a, ao), y = arrange(b, bo);
      if (nn > 0) {
        std::vector<int64_t> ax;
        for (size_t i = 0; i < nn; ++i) ax.push_back(int64_t(nb + na + i));
        x = s_.apply(ops::OpId::ExpandDims, ints_attr(ax), {x}, span_);
      }
      if (na > 0) {
        std::vector<int64_t> ax;
        for (size_t i = 0; i < na; ++i) ax.push_back(int64_t(nb + i));
        y = s_.apply(ops::OpId::ExpandDims, ints_attr(ax), {y}, span_);
      }
      r.t = s_.tensor_binary(ops::OpId::Mul, x, y, span_);
      return r;
    }
    std::vector<Label> ao = batch, bo = batch;
    ao.insert(ao.end(), a_only.begin(), a_only.end());
    ao.insert(ao.end(), summed.begin(), summed.end());
    bo.insert(bo.end(), summed.begin(), summed.end());
    bo.insert(bo.end(), b_only.begin(), b_only.end());
    Value x = arrange(a, ao), y = arrange(b, bo);
    // [batch..., M, K] and [batch..., K, N]: reshape only groups that are not one dim.
    auto merged = [&](const Value& t, size_t first, size_t n1, size_t n2) {
      if (n1 == 1 && n2 == 1) return t;
      std::vector<Value> shape;
      for (size_t i = 0; i < first; ++i) shape.push_back(dim(t, i));
      shape.push_back(group_size(t, first, first + n1));
      shape.push_back(group_size(t, first + n1, first + n1 + n2));
      return reshape(s_, t, make_tuple(shape), span_);
    };
    const Value xm = merged(x, nb, na, nc), ym = merged(y, nb, nc, nn);
    Value prod = s_.apply(ops::OpId::MatMul, {}, {xm, ym}, span_);
    if (!(na == 1 && nn == 1)) {
      std::vector<Value> shape;
      for (size_t i = 0; i < nb; ++i) shape.push_back(dim(prod, i));
      for (size_t i = 0; i < na; ++i) shape.push_back(dim(x, nb + i));
      for (size_t i = 0; i < nn; ++i) shape.push_back(dim(y, nb + nc + i));
      prod = reshape(s_, prod, make_tuple(shape), span_);
    }
    r.t = prod;
    return r;
  }

  static ops::Attrs ints_attr(std::vector<int64_t> v) {
    ops::Attrs a;
    a.values = {ops::AttrValue::Ints(std::move(v))};
    return a;
  }

  Stager& s_;
  SourceSpan span_;
  std::vector<Label> output_;
};

}  // namespace

namespace {

// optimize=: False/None, True, 'greedy', 'optimal', or ['einsum_path', (i, j), ...]
// over `count` operands (as np.einsum_path gives it).
Optimize parse_optimize(Stager& s, const Value& v, size_t count, SourceSpan span) {
  Optimize o;
  if (v.is<NoneV>() || (v.is<bool>() && !v.as<bool>())) return o;
  if ((v.is<bool>() && v.as<bool>()) ||
      (v.is<std::string>() && (v.as<std::string>() == "greedy" || v.as<std::string>() == "optimal"))) {
    o.kind = Optimize::Kind::kGreedy;
    return o;
  }
  if (!v.is<ListPtr>() && !v.is<TuplePtr>())
    s.fail(span, "einsum: optimize must be False, True, 'greedy', 'optimal' or a path from einsum_path");
  const std::vector<Value> items = s.to_list(v, span);
  if (items.empty() || !items[0].is<std::string>() || items[0].as<std::string>() != "einsum_path")
    s.fail(span, "einsum: an explicit optimize path is a list that starts with 'einsum_path'");
  o.kind = Optimize::Kind::kExplicit;
  size_t left = count;
  for (size_t k = 1; k < items.size(); ++k) {
    std::vector<int64_t> p;
    for (const Value& i : s.to_list(items[k], span)) p.push_back(s.to_int(i, span, "an einsum path index"));
    std::sort(p.begin(), p.end());
    if (p.size() == 1 && left == 1 && p[0] == 0) continue;
    if (p.size() != 2 || p[0] == p[1] || p[0] < 0 || size_t(p[1]) >= left)
      s.fail(span, "einsum: path step " + std::to_string(k) + " must name two operands of the " +
                       std::to_string(left) + " left");
    o.pairs.emplace_back(size_t(p[0]), size_t(p[1]));
    --left;
  }
  if (left != 1)
    s.fail(span, "einsum: the optimize path leaves " + std::to_string(left) + " operands; it must contract them to one");
  return o;
}

}  // namespace

Value sg_einsum(Stager& s, const Args& a, const std::string&) {
  Value optimize = Value(false);
  for (const auto& [k, v] : a.kw) {
    if (k != "optimize") s.fail(a.span, "einsum() got an unexpected keyword argument '" + k + "'");
    optimize = v;
  }
  if (a.pos.empty() || !a.pos[0].is<std::string>())
    s.fail(a.span, "einsum: the first argument must be the subscripts, a string known at compile time");
  if (a.pos.size() < 2) s.fail(a.span, "einsum: needs at least one operand");
  std::vector<Term> terms;
  for (size_t i = 1; i < a.pos.size(); ++i) {
    const SourceSpan sp = i < a.pos_spans.size() ? a.pos_spans[i] : a.span;
    terms.push_back(Term{a.pos[i].is_tensor() ? a.pos[i] : s.to_tensor(a.pos[i], std::nullopt, sp), {}, sp});
  }
  const Optimize opt = parse_optimize(s, optimize, terms.size(), a.span);
  const SourceSpan sub_span = a.pos_spans.empty() ? a.span : a.pos_spans[0];
  return Einsum(s, a.span).run(a.pos[0].as<std::string>(), std::move(terms), sub_span, opt);
}

}  // namespace sg::compiler::staging
