// print and assert on staged values (SPEC §5): Print and Assert nodes that run
// at their place in program order, inside the If or While function where they
// appear. Static arguments are baked into the Print node's format.
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

// The Print/Assert format escapes braces by doubling them.
std::string escape_braces(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
  return out;
}

}  // namespace

void Stager::stage_print(const Args& a, const std::string& sep, const std::string& end) {
  if (!cur_) fail(a.span, "print of a value known only at run time outside a function");
  std::string format;
  std::vector<int32_t> inputs;
  for (size_t i = 0; i < a.pos.size(); ++i) {
    if (i) format += escape_braces(sep);
    Value v = a.pos[i];
    if (v.is<TensorListV>()) v = Value(resolve_tensor_list(v.as<TensorListV>(), "list", a.pos_spans[i]));
    if (v.is<Staged>()) {
      format += "{}";
      inputs.push_back(materialize(v, a.pos_spans[i]));
    } else if (v.is<FormattedV>()) {
      for (const Value& part : v.as<FormattedV>().parts) {
        if (part.is<Staged>()) {
          format += "{}";
          inputs.push_back(materialize(part, a.pos_spans[i]));
        } else {
          format += escape_braces(part.as<std::string>());
        }
      }
    } else {
      format += escape_braces(py_str(v));
    }
  }
  // The runtime's print ends each line itself; a custom `end` is kept in the text.
  if (end != "\n") format += escape_braces(end);
  ir::Node node;
  node.op = ops::OpId::Print;
  node.attrs.values.push_back(ops::AttrValue::String(format));
  node.inputs = std::move(inputs);
  node.span = a.span;
  fn().nodes.push_back(std::move(node));
}

void Stager::stage_assert(const Stmt& s, const Value& test) {
  const ir::Type t = tensor_type(test);
  if (t.rank() != 0)
    fail(s.test->span, "the test of an assert must be a scalar, got " + module_->format_type(t) +
                           "; use sg.any or sg.all", provenance_notes({test}));
  const Value cond = t.dtype == DType::kBool ? test : tensor_binary(ops::OpId::NotEqual, test, Value(int64_t(0)), s.test->span);
  std::string message;  // empty: the runtime says just "assertion failed"
  if (s.msg) {
    const Value m = eval(*s.msg);
    if (m.is<Staged>() || m.is<FormattedV>())
      fail(s.msg->span, "the message of an assert must be known at compile time");
    message = py_str(m);
  }
  assert_at_run_time(cond, message, s.span);
}

void Stager::assert_at_run_time(const Value& ok, const std::string& message, SourceSpan span) {
  ir::Node node;
  node.op = ops::OpId::Assert;
  node.attrs.values.push_back(ops::AttrValue::String(message));
  node.inputs = {materialize(ok, span)};
  node.span = span;
  fn().nodes.push_back(std::move(node));
}

}  // namespace sg::compiler::staging
