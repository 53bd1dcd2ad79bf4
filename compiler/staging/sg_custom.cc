// sg.custom_op (SPEC §7): an op the op table lacks, declared by the program.
//
//   def swish_result(x):
//       return x.dtype, x.shape
//   swish = sg.custom_op("my_ns.swish", fn=swish_eager, result=swish_result)
//
// The declared value is a BoundMethod named kCustomOpMethod (no Python method has
// that name) holding (name, fn, result). A call stages `result` on the operands
// at compile time, as any function of the program (so it may check them with
// assert), and emits a `custom` node with the dtype and shape it returned; `fn`
// is eager mode's. An optional `vjp` rule makes the op differentiable.
#include <string>

#include "staging/arg_binding.h"
#include "staging/differentiation.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

constexpr const char* kCustomOpMethod = "<custom op>";

}  // namespace

Value sg_custom_op(Stager& s, const Args& a, const std::string&) {
  BoundArgs b(s, a, "sg.custom_op", {"name", "fn", "result", "vjp"}, 3);
  if (!b[0].is<std::string>() || b[0].as<std::string>().empty())
    s.fail(b.span(0), "sg.custom_op: the op name must be a non-empty string, got " + py_repr(b[0]));
  for (size_t i : {size_t(1), size_t(2)})
    if (!b[i].is<std::shared_ptr<FunctionV>>())
      s.fail(b.span(i), std::string("sg.custom_op: ") + (i == 1 ? "fn" : "result") +
                            " must be a function of the program, got " + type_name(b[i]));
  // vjp(*operands, output, cotangent) -> one cotangent per operand (None: none),
  // staged into the backward pass where the op is differentiated (autodiff.cc).
  if (b.has(3)) {
    if (!b[3].is<std::shared_ptr<FunctionV>>())
      s.fail(b.span(3), "sg.custom_op: vjp must be a function of the program, got " + type_name(b[3]));
    s.differentiation().set_custom_vjp(b[0].as<std::string>(), b[3]);
  }
  return Value(BoundMethod{kCustomOpMethod, std::make_shared<Value>(make_tuple({b[0], b[1], b[2]}))});
}

bool is_custom_op(const BoundMethod& m) { return m.name == kCustomOpMethod; }

Value call_custom_op(Stager& s, const BoundMethod& m, Args& a) {
  const std::vector<Value>& spec = *m.self->as<TuplePtr>();
  const std::string& op = spec[0].as<std::string>();
  if (!a.kw.empty()) s.fail(a.span, "custom op '" + op + "' takes its operands as positional arguments");
  std::vector<Value> operands;
  for (const Value& v : a.pos) {
    if (!v.is_tensor() && !v.is_number())
      s.fail(a.span, "custom op '" + op + "': operands must be tensors or numbers, got " + type_name(v));
    operands.push_back(s.to_tensor(v, std::nullopt, a.span));
  }
  Args rule = a;
  rule.pos = operands;
  const Value r = s.call_value(spec[2], rule);
  const bool pair = (r.is<TuplePtr>() || r.is<ListPtr>()) && s.to_list(r, a.span).size() == 2;
  const std::vector<Value> items = pair ? s.to_list(r, a.span) : std::vector<Value>{};
  if (!pair || !items[0].is<DTypeV>())
    s.fail(a.span, "custom op '" + op + "': its result rule must return (dtype, shape), got " + py_repr(r));
  const ShapeArg shape = s.shape_arg(items[1], a.span, false);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(shape.dims), ops::AttrValue::Int(int64_t(items[0].as<DTypeV>().dtype)),
                  ops::AttrValue::String(op), ops::AttrValue::Int(int64_t(operands.size()))};
  std::vector<Value> inputs = operands;
  inputs.insert(inputs.end(), shape.dynamic.begin(), shape.dynamic.end());
  return s.apply(ops::OpId::Custom, std::move(attrs), std::move(inputs), a.span);
}

}  // namespace sg::compiler::staging
