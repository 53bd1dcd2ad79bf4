// The IR's text form, for golden tests and `graph-compile --dump-ir`:
//
//   func mlp(%x: f32[N, 784], %w1: f32[784, 512]) -> (%5: f32[N, 10]) {
//     %b1 = const f32[512] #0
//     %3: f32[N, 512] = matmul(%x, %w1)                # mlp.py:7:9
//     %6: f32[N, 10] = if %c then @then_1 else @else_2 (%a, %b)
//     return %5
//   }
//   entry mlp = @mlp (x, w1) -> (output_0)
//
// Output must be deterministic: golden files compare it byte for byte.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sg::compiler::ir {
namespace {

constexpr size_t kTextWidth = 46;  // instructions are padded to this before "  # file:line:col"
constexpr size_t kMaxShownElements = 4;

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Names must be unambiguous within a function: a source name used by one value
// prints as %name, a repeated one as %name.id, an unnamed value as %id.
std::vector<std::string> value_labels(const Function& fn) {
  std::map<std::string, int> counts;
  for (const Value& v : fn.values)
    if (!v.name.empty()) ++counts[v.name];
  std::vector<std::string> labels(fn.values.size());
  for (size_t i = 0; i < fn.values.size(); ++i) {
    const std::string& n = fn.values[i].name;
    if (n.empty()) labels[i] = "%" + std::to_string(i);
    else if (counts[n] == 1) labels[i] = "%" + n;
    else labels[i] = "%" + n + "." + std::to_string(i);
  }
  return labels;
}

std::vector<std::string> function_labels(const Module& m) {
  std::map<std::string, int> counts;
  for (const Function& f : m.functions) ++counts[f.name];
  std::vector<std::string> labels(m.functions.size());
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const std::string& n = m.functions[i].name;
    labels[i] = counts[n] == 1 ? "@" + n : "@" + n + "." + std::to_string(i);
  }
  return labels;
}

std::string format_attr(const ops::AttrValue& a) {
  std::string s;
  switch (a.kind) {
    case ops::AttrKind::kInt: return std::to_string(a.i);
    case ops::AttrKind::kFloat: return format_double(a.f);
    case ops::AttrKind::kString: return "\"" + a.s + "\"";
    case ops::AttrKind::kInts:
      for (size_t i = 0; i < a.ints.size(); ++i) s += (i ? ", " : "") + std::to_string(a.ints[i]);
      return "[" + s + "]";
    case ops::AttrKind::kFloats:
      for (size_t i = 0; i < a.floats.size(); ++i) s += (i ? ", " : "") + format_double(a.floats[i]);
      return "[" + s + "]";
  }
  return "?";
}

std::string format_attrs(const Node& node) {
  if (node.attrs.values.empty()) return "";
  std::span<const ops::AttrSpec> specs;
  if (node.kind == NodeKind::kOp && int(node.op) < ops::kNumOps) specs = ops::op_def(node.op).attrs;
  std::string s = " {";
  for (size_t k = 0; k < node.attrs.values.size(); ++k) {
    const ops::AttrValue& a = node.attrs.values[k];
    const bool named = k < specs.size();
    s += k ? ", " : "";
    s += named ? specs[k].name : "#" + std::to_string(k);
    s += "=";
    // A cast's target dtype reads better by name than by enum value.
    if (named && std::strcmp(specs[k].name, "dtype") == 0 && a.kind == ops::AttrKind::kInt && a.i >= 0 &&
        a.i < kNumDTypes)
      s += dtype_name(DType(a.i));
    else
      s += format_attr(a);
  }
  return s + "}";
}

// The first few elements of a small constant, so that golden files show values.
std::string format_constant_values(const Constant& k) {
  const size_t n = k.bytes.size() / dtype_size(k.dtype);
  if (n == 0 || n > kMaxShownElements || k.bytes.size() % dtype_size(k.dtype) != 0) return "";
  const bool scalar = k.shape.empty();
  std::string s = scalar ? " = " : " = [";
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = k.bytes.data() + i * dtype_size(k.dtype);
    if (i) s += ", ";
    switch (k.dtype) {
      case DType::kF32: { float v; std::memcpy(&v, p, 4); s += format_double(v); break; }
      case DType::kF16: { uint16_t h; std::memcpy(&h, p, 2); s += format_double(half_to_float(h)); break; }
      case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); s += std::to_string(v); break; }
      case DType::kI64: { int64_t v; std::memcpy(&v, p, 8); s += std::to_string(v); break; }
      case DType::kBool: s += *p ? "true" : "false"; break;
    }
  }
  return scalar ? s : s + "]";
}

class Printer {
 public:
  explicit Printer(const Module& m) : m_(m), fn_labels_(function_labels(m)) {}

  std::string run() {
    if (!m_.symbols.names.empty()) {
      out_ += "symbols";
      for (size_t i = 0; i < m_.symbols.names.size(); ++i) out_ += (i ? ", " : " ") + m_.symbols.names[i];
      out_ += "\n\n";
    }
    for (size_t f = 0; f < m_.functions.size(); ++f) print_function(f);
    for (const Entry& e : m_.entries) print_entry(e);
    return out_;
  }

 private:
  std::string label(int32_t v) const {
    return v >= 0 && size_t(v) < labels_.size() ? labels_[size_t(v)] : "%<bad " + std::to_string(v) + ">";
  }
  std::string fn_label(int32_t f) const {
    return f >= 0 && size_t(f) < fn_labels_.size() ? fn_labels_[size_t(f)] : "@<bad " + std::to_string(f) + ">";
  }
  std::string typed(int32_t v) const {
    if (v < 0 || size_t(v) >= fn_->values.size()) return label(v);
    return label(v) + ": " + m_.format_type(fn_->values[size_t(v)].type);
  }
  std::string list(const std::vector<int32_t>& ids, bool with_types) const {
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + (with_types ? typed(ids[i]) : label(ids[i]));
    return s;
  }
  std::string location(const SourceSpan& span) const {
    if (!span.valid()) return "";
    std::string file;
    if (m_.sources && span.file < m_.sources->size()) file = m_.sources->file(span.file).path + ":";
    return file + std::to_string(span.line) + ":" + std::to_string(span.col);
  }
  void line(std::string text, const SourceSpan& span) {
    const std::string loc = location(span);
    out_ += "  " + text;
    if (!loc.empty()) {
      if (text.size() < kTextWidth) out_ += std::string(kTextWidth - text.size(), ' ');
      out_ += "  # " + loc;
    }
    out_ += "\n";
  }

  void print_function(size_t f) {
    fn_ = &m_.functions[f];
    labels_ = value_labels(*fn_);
    out_ += "func " + fn_labels_[f].substr(1) + "(" + list(fn_->params, true) + ") -> (" + list(fn_->results, true) +
            ") {\n";
    for (size_t v = 0; v < fn_->values.size(); ++v) {
      const Value& val = fn_->values[v];
      if (val.constant < 0) continue;
      std::string text = label(int32_t(v)) + " = const " + m_.format_type(val.type) + " #" + std::to_string(val.constant);
      if (size_t(val.constant) < m_.constants.size()) text += format_constant_values(m_.constants[size_t(val.constant)]);
      line(std::move(text), val.span);
    }
    for (const Node& node : fn_->nodes) print_node(node);
    out_ += "  return " + list(fn_->results, false) + "\n}\n\n";
  }

  void print_node(const Node& node) {
    std::string text = list(node.outputs, true);
    if (!text.empty()) text += " = ";
    auto fn_at = [&](size_t i) { return i < node.functions.size() ? fn_label(node.functions[i]) : "@<missing>"; };
    switch (node.kind) {
      case NodeKind::kOp:
        text += int(node.op) < ops::kNumOps ? ops::op_def(node.op).name : "<bad op " + std::to_string(int(node.op)) + ">";
        text += "(" + list(node.inputs, false) + ")" + format_attrs(node);
        break;
      case NodeKind::kIf: {
        std::vector<int32_t> args(node.inputs.begin() + (node.inputs.empty() ? 0 : 1), node.inputs.end());
        text += "if " + (node.inputs.empty() ? std::string("<no cond>") : label(node.inputs[0])) + " then " + fn_at(0) +
                " else " + fn_at(1) + " (" + list(args, false) + ")";
        break;
      }
      case NodeKind::kWhile:
        text += "while " + fn_at(0) + " do " + fn_at(1) + " (" + list(node.inputs, false) + ")";
        break;
      case NodeKind::kCall:
        text += "call " + fn_at(0) + " (" + list(node.inputs, false) + ")";
        break;
    }
    line(std::move(text), node.span);
  }

  void print_entry(const Entry& e) {
    auto names = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
      return s;
    };
    auto vars = [&](const std::vector<int32_t>& ids) {
      std::vector<std::string> v;
      for (int32_t id : ids) v.push_back(m_.variables[size_t(id)].name);
      return names(v);
    };
    out_ += "entry " + e.name + " = " + fn_label(e.function) + " (" + names(e.input_names) + ") -> (" +
            names(e.output_names) + ")";
    if (!e.reads.empty()) out_ += " reads (" + vars(e.reads) + ")";
    if (!e.writes.empty()) out_ += " assigns (" + vars(e.writes) + ")";
    out_ += "\n";
  }

  const Module& m_;
  std::vector<std::string> fn_labels_;
  const Function* fn_ = nullptr;
  std::vector<std::string> labels_;
  std::string out_;
};

}  // namespace

std::string print(const Module& m) { return Printer(m).run(); }

}  // namespace sg::compiler::ir
