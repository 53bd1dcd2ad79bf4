// The ordering family of the op library (SPEC §7): cumsum, sort, argsort, topk,
// cumprod and searchsorted. Dtype and shape checks are the op table's rules, run
// by Stager::apply; here arguments are read NumPy's way.
#include <string>
#include <vector>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {

Value sg_ordering(Stager& s, const Args& a, const std::string& name) {
  const bool cumsum = name == "cumsum";
  BoundArgs b(s, a, name, {"x", "axis"}, 1);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  // An explicit axis=None flattens (NumPy); left out it is -1 except for cumsum.
  bool axis_given = a.pos.size() > 1;
  for (const auto& kv : a.kw) axis_given = axis_given || kv.first == "axis";
  Value axis = axis_given ? b[1] : cumsum ? Value() : Value(int64_t(-1));
  if (axis.is<NoneV>()) {  // NumPy: along the flattened tensor
    x = flatten(s, x, a.span);
    axis = Value(int64_t(0));
  }
  if (s.tensor_rank(x) == 0) s.fail(a.span, name + ": needs a tensor of rank 1 or more (or axis=None)");
  const ops::OpId op = cumsum ? ops::OpId::CumSum : name == "sort" ? ops::OpId::Sort : ops::OpId::ArgSort;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(normalize_axis(s, axis, s.tensor_rank(x), a.span))};
  return s.apply(op, std::move(attrs), {x}, a.span);
}

Value sg_topk(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "k", "axis"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  if (s.tensor_rank(x) == 0) s.fail(a.span, "topk: needs a tensor of rank 1 or more");
  const int64_t k = non_negative(s, b[1], a.span, "topk's k");
  if (b.none(2)) s.fail(a.span, "topk: axis must be an int, got None");
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(k),
                  ops::AttrValue::Int(normalize_axis(s, b.get(2, Value(int64_t(-1))), s.tensor_rank(x), a.span))};
  return make_tuple(s.apply_all(ops::OpId::TopK, std::move(attrs), {x}, a.span));
}

Value sg_cumprod(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axis"}, 1);
  Value x = tensor_of(s, b[0], a.span);
  Value axis = b.get(1, Value());
  if (axis.is<NoneV>()) {  // NumPy: along the flattened tensor
    x = flatten(s, x, a.span);
    axis = Value(int64_t(0));
  }
  if (s.tensor_rank(x) == 0) s.fail(a.span, "cumprod: needs a tensor of rank 1 or more (or axis=None)");
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(normalize_axis(s, axis, s.tensor_rank(x), a.span))};
  return s.apply(ops::OpId::CumProd, std::move(attrs), {x}, a.span);
}

Value sg_searchsorted(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"a", "v", "side", "sorter"}, 2);
  Value sorted = tensor_of(s, b[0], b.span(0));
  if (b.has(3)) sorted = sg_call(s, "take", {sorted, b[3]}, b.span(3));
  const Value v = b[1].is_tensor() ? b[1] : s.to_tensor(b[1], s.tensor_dtype(sorted), b.span(1));
  int64_t right = 0;
  if (b.has(2)) {
    if (!b[2].is<std::string>() || (b[2].as<std::string>() != "left" && b[2].as<std::string>() != "right"))
      s.fail(b.span(2), "searchsorted: side must be 'left' or 'right'");
    right = b[2].as<std::string>() == "right";
  }
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(right)};
  return s.apply(ops::OpId::SearchSorted, std::move(attrs), {sorted, v}, a.span);
}

}  // namespace sg::compiler::staging
