// The reduction family of the op library (SPEC §7): sum, mean, max (amax), min
// (amin), prod, any, all, argmax, argmin; the lowering is reduce() (sg_ops.cc).
#include <string>
#include <utility>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {

Value sg_reduction(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axis", "keepdims"}, 1);
  static const std::pair<const char*, ops::OpId> kOps[] = {
      {"sum", ops::OpId::Sum}, {"mean", ops::OpId::Mean}, {"max", ops::OpId::Max},
      {"min", ops::OpId::Min}, {"prod", ops::OpId::Prod}, {"any", ops::OpId::Any},
      {"all", ops::OpId::All}, {"argmax", ops::OpId::ArgMax}, {"argmin", ops::OpId::ArgMin},
      {"amax", ops::OpId::Max}, {"amin", ops::OpId::Min}};
  ops::OpId op = ops::OpId::Sum;
  for (const auto& [n, id] : kOps)
    if (name == n) op = id;
  const bool keepdims = b.has(2) && s.truth(b[2], a.span, "keepdims");
  return reduce(s, op, b[0], b.get(1, Value()), keepdims, a.span);
}

}  // namespace sg::compiler::staging
