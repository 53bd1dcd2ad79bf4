// The indexing family of the op library (SPEC §7): sg.take. (Item reads and
// assignment are staging/indexing.cc and advanced_indexing.cc: slice, slice_update,
// scatter, flat_nonzero and sg.nonzero, sg.compress.)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {

Value sg_take(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "indices", "axis"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  Value idx = b[1];
  if (idx.is<TuplePtr>() || idx.is<ListPtr>()) {
    std::vector<Value> items = s.to_list(idx, a.span);
    auto t = std::make_shared<StaticTensor>();
    t->dtype = DType::kI64;
    t->shape = {int64_t(items.size())};
    for (const Value& v : items) {
      const int64_t i = s.to_int(v, a.span, "an index");
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&i);
      t->bytes.insert(t->bytes.end(), p, p + 8);
    }
    idx = Value(StaticTensorPtr(t));
  }
  idx = s.to_tensor(idx, std::nullopt, a.span);
  if (!is_int(s.tensor_dtype(idx))) s.fail(a.span, "take: indices must be integers");
  if (b.none(2)) x = flatten(s, x, a.span);  // NumPy: indices into the flattened tensor
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(normalize_axis(s, b.get(2, Value(int64_t(0))), s.tensor_rank(x), a.span))};
  return s.apply(ops::OpId::Take, std::move(attrs), {x, idx}, a.span);
}

}  // namespace sg::compiler::staging
