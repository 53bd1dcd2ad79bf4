// `and`, `or` and `x if c else y` on staged values (SPEC §5): Python's
// short-circuit meaning. The operand Python would not evaluate runs inside an
// If branch, so `i < n and x[i] > 0` never indexes out of range. Only where
// evaluating it can neither fail nor have an effect (names, constants,
// comparisons and elementwise arithmetic without division) are both sides
// computed, as logical_and / logical_or.
#include "staging/control_state.h"
#include "staging/staged_if.h"

namespace sg::compiler::staging {

bool cannot_fail(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kName:
    case ExprKind::kInt:
    case ExprKind::kFloat:
    case ExprKind::kBool: return true;
    case ExprKind::kUnaryOp: return e.unary_op != UnaryOp::kInvert && cannot_fail(*e.a);
    case ExprKind::kBinOp:
      return (e.bin_op == BinOp::kAdd || e.bin_op == BinOp::kSub || e.bin_op == BinOp::kMul) &&
             cannot_fail(*e.a) && cannot_fail(*e.b);
    case ExprKind::kCompare:
      for (CmpOp op : e.cmp_ops)
        if (op == CmpOp::kIn || op == CmpOp::kNotIn || op == CmpOp::kIs || op == CmpOp::kIsNot) return false;
      for (const ExprPtr& x : e.elts)
        if (!cannot_fail(*x)) return false;
      return e.cmp_ops.size() == 1 && cannot_fail(*e.a);
    case ExprKind::kBoolOp:
      for (const ExprPtr& x : e.elts)
        if (!cannot_fail(*x)) return false;
      return true;
    default: return false;
  }
}

namespace {

// The bool scalar a staged operand stands for.
Value staged_truth(Stager& st, const Value& v, SourceSpan span, const char* what) {
  if (!v.is_tensor()) return Value(st.truth(v, span, what));
  if (st.tensor_rank(v) != 0)
    st.fail(span, std::string("an operand of ") + what + " must be a scalar, got " +
                      st.module().format_type(st.tensor_type(v)) + "; use sg.any or sg.all",
            st.provenance_notes({v}));
  if (st.tensor_dtype(v) == DType::kBool) return v;
  return st.tensor_binary(ops::OpId::NotEqual, v, Value(int64_t(0)), span);
}

// Runs `then_fn`/`else_fn` as the branches of an If; each leaves its value in
// the hidden variable `slot`, which is read and removed.
Value select(Stager& st, SourceSpan span, const Value& cond, const char* label,
             const std::function<Value()>& then_fn, const std::function<Value()>& else_fn) {
  const std::string slot = std::string("$") + label;
  st.branches().staged_branches(span, cond, label, [&] { st.scope().set(slot, then_fn()); },
                                [&] { st.scope().set(slot, else_fn()); });
  Value v = *st.scope().find_local(slot);
  st.scope().erase(slot);
  return v;
}

}  // namespace

Value Branches::eval_bool_op(const Expr& e) {
  const bool is_and = e.bool_op == BoolOp::kAnd;
  const char* what = is_and ? "`and`" : "`or`";
  Value v = s_.eval(*e.elts[0]);
  for (size_t i = 1; i < e.elts.size(); ++i) {
    if (!v.is<Staged>()) {
      const bool t = s_.truth(v, e.elts[i - 1]->span, "a boolean operator");
      if (is_and ? !t : t) return v;
      v = s_.eval(*e.elts[i]);
      continue;
    }
    const Value left = staged_truth(s_, v, e.elts[i - 1]->span, what);
    const Expr& rhs = *e.elts[i];
    if (cannot_fail(rhs)) {
      const Value right = staged_truth(s_, s_.eval(rhs), rhs.span, what);
      v = s_.tensor_binary(is_and ? ops::OpId::LogicalAnd : ops::OpId::LogicalOr, left, s_.to_tensor(right, DType::kBool, rhs.span),
                           e.span);
      continue;
    }
    auto right = [&] { return staged_truth(s_, s_.eval(rhs), rhs.span, what); };
    auto constant = [&] { return Value(!is_and); };
    v = is_and ? select(s_, e.span, left, "and", right, constant) : select(s_, e.span, left, "or", constant, right);
    if (!v.is_tensor()) v = s_.to_tensor(v, DType::kBool, e.span);
  }
  return v;
}

Value Branches::eval_if_exp(const Expr& e) {
  Value test = s_.eval(*e.a);
  if (!test.is<Staged>()) return s_.truth(test, e.a->span, "a conditional expression") ? s_.eval(*e.b) : s_.eval(*e.c);
  const Value cond = staged_truth(s_, test, e.a->span, "a conditional expression");
  if (s_.explaining())
    s_.explain(e.span, "conditional expression", "staged (the test `" + s_.source_text(e.a->span) + "` " +
                                                     staged_reason(s_, test) + ")");
  return select(s_, e.span, cond, "ifexp", [&] { return s_.eval(*e.b); }, [&] { return s_.eval(*e.c); });
}

}  // namespace sg::compiler::staging
