// The elementwise family of the op library (SPEC §7): sg.NAME for the unary and
// binary ops (NumPy's names and aliases: subtract, true_divide, ...), where, clip
// and astype.
#include <optional>
#include <string>
#include <utility>

#include "staging/arg_binding.h"
#include "staging/indexing.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

std::optional<ops::OpId> binary_id(const std::string& name) {
  static const std::pair<const char*, ops::OpId> kAliases[] = {
      {"add", ops::OpId::Add},          {"subtract", ops::OpId::Sub},        {"multiply", ops::OpId::Mul},
      {"divide", ops::OpId::Div},       {"true_divide", ops::OpId::Div},     {"floor_divide", ops::OpId::FloorDiv},
      {"mod", ops::OpId::Mod},          {"remainder", ops::OpId::Mod},       {"power", ops::OpId::Pow}};
  for (const auto& [n, id] : kAliases)
    if (name == n) return id;
  return ops::find_op(name);
}

}  // namespace

Value sg_unary(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x"}, 1);
  const ops::OpId op = name == "negative" ? ops::OpId::Neg : *ops::find_op(name);
  const Value x = s.to_tensor(b[0], std::nullopt, a.span);
  if (op == ops::OpId::Log)
    if (std::optional<Value> stable = s.stable_log(x, a.span)) return *stable;
  return s.apply(op, {}, {x}, a.span);
}

Value sg_binary(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x1", "x2"}, 2);
  const ops::OpId op = *binary_id(name);
  Value x = b[0], y = b[1];
  if (!x.is_tensor() && !y.is_tensor()) x = s.to_tensor(x, std::nullopt, a.span);
  if ((op == ops::OpId::LogicalAnd || op == ops::OpId::LogicalOr)) {
    std::vector<Value> v = {x, y};
    for (Value& t : v) {
      if (!t.is_tensor()) t = s.to_tensor(t, std::nullopt, a.span);
      if (s.tensor_dtype(t) != DType::kBool) t = s.tensor_binary(ops::OpId::NotEqual, t, Value(int64_t(0)), a.span);
    }
    return s.apply(op, {}, v, a.span);
  }
  return s.tensor_binary(op, x, y, a.span);
}

Value sg_where(Stager& s, const Args& a, const std::string& name) {
  if (a.pos.size() + a.kw.size() == 1) return sg_nonzero(s, a, name);  // where(cond): nonzero(cond)
  BoundArgs b(s, a, name, {"condition", "x", "y"}, 3);
  Value c = s.to_tensor(b[0], std::nullopt, a.span);
  if (s.tensor_dtype(c) != DType::kBool)
    s.fail(a.span, std::string("where: the condition must be bool, got ") + dtype_name(s.tensor_dtype(c)));
  std::vector<Value> v = unify_dtypes(s, {b[1], b[2]}, "where", a.span);
  return s.apply(ops::OpId::Where, {}, {c, v[0], v[1]}, a.span);
}

Value sg_clip(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "a_min", "a_max"}, 3);
  if (!b.has(1) && !b.has(2)) s.fail(a.span, "clip: one of a_min and a_max must be given");
  if (!b.has(1)) return s.tensor_binary(ops::OpId::Minimum, s.to_tensor(b[0], std::nullopt, a.span), b[2], a.span);
  if (!b.has(2)) return s.tensor_binary(ops::OpId::Maximum, s.to_tensor(b[0], std::nullopt, a.span), b[1], a.span);
  std::vector<Value> v = unify_dtypes(s, {s.to_tensor(b[0], std::nullopt, a.span), b[1], b[2]}, "clip", a.span);
  return s.apply(ops::OpId::Clip, {}, v, a.span);
}

Value sg_astype(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "dtype"}, 2);
  return astype(s, b[0], b[1], a.span);
}

}  // namespace sg::compiler::staging
