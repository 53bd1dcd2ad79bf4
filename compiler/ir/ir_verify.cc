// The IR verifier: structural invariants that every pass and the emitter rely on.
// It reports the first violation it finds, naming the function and node, because a
// failure here is a compiler bug and the message is read by a compiler engineer.
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace sg::compiler::ir {
namespace {

class Verifier {
 public:
  explicit Verifier(const Module& m) : m_(m) {}

  std::string run() {
    for (size_t c = 0; c < m_.constants.size(); ++c) check_constant(c);
    for (size_t f = 0; f < m_.functions.size() && error_.empty(); ++f) check_function(int32_t(f));
    if (error_.empty()) check_entries();
    return error_;
  }

 private:
  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  std::string where(int32_t f) const { return "function " + std::to_string(f) + " '" + m_.functions[size_t(f)].name + "'"; }
  std::string where(int32_t f, size_t n) const { return where(f) + ", node " + std::to_string(n); }

  bool check_dims(const Type& t, const std::string& what) {
    if (size_t(t.dtype) >= size_t(kNumDTypes)) return fail(what + ": invalid dtype " + std::to_string(int(t.dtype)));
    for (const Dim& d : t.shape) {
      if (auto v = d.as_static()) {
        if (*v < 0) return fail(what + ": negative dim in " + m_.format_shape(t.shape));
        continue;
      }
      for (const auto& term : d.terms())
        for (int32_t s : term.symbols)
          if (s < 0 || size_t(s) >= m_.symbols.names.size())
            return fail(what + ": symbol id " + std::to_string(s) + " out of range");
    }
    return true;
  }

  void check_constant(size_t c) {
    const Constant& k = m_.constants[c];
    const std::string what = "constant #" + std::to_string(c);
    if (size_t(k.dtype) >= size_t(kNumDTypes)) {
      fail(what + ": invalid dtype");
      return;
    }
    uint64_t count = 1;
    for (int64_t d : k.shape) {
      if (d < 0) {
        fail(what + ": negative dim");
        return;
      }
      count *= uint64_t(d);
    }
    if (count * dtype_size(k.dtype) != k.bytes.size())
      fail(what + ": " + std::to_string(k.bytes.size()) + " bytes for " + std::to_string(count) + " elements of " +
           dtype_name(k.dtype));
  }

  // Types across a function boundary: same dtype and rank, and static dims equal.
  // A symbolic dim on either side may stand for a static one (a branch result that
  // joined [3] and [4] into [K], a callee specialised with widened dims).
  bool compatible(const Type& a, const Type& b) const {
    if (a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
    for (size_t i = 0; i < a.shape.size(); ++i) {
      auto x = a.shape[i].as_static(), y = b.shape[i].as_static();
      if (x && y && *x != *y) return false;
    }
    return true;
  }

  bool check_boundary(const std::string& ctx, const char* what, const Function& caller,
                      const std::vector<int32_t>& caller_ids, const Function& callee,
                      const std::vector<int32_t>& callee_ids) {
    if (caller_ids.size() != callee_ids.size())
      return fail(ctx + ": " + std::to_string(caller_ids.size()) + " " + what + " but function '" + callee.name +
                  "' has " + std::to_string(callee_ids.size()));
    for (size_t i = 0; i < caller_ids.size(); ++i) {
      const Type& a = caller.values[size_t(caller_ids[i])].type;
      const Type& b = callee.values[size_t(callee_ids[i])].type;
      if (!compatible(a, b))
        return fail(ctx + ": " + what + " " + std::to_string(i) + " is " + m_.format_type(a) + " but function '" +
                    callee.name + "' has " + m_.format_type(b));
    }
    return true;
  }

  bool is_bool_scalar(const Type& t) const { return t.dtype == DType::kBool && t.shape.empty(); }

  bool check_op(int32_t f, size_t n, const Node& node) {
    const std::string ctx = where(f, n);
    if (int(node.op) >= ops::kNumOps) return fail(ctx + ": op id " + std::to_string(int(node.op)) + " out of range");
    const ops::OpDef& def = ops::op_def(node.op);
    const int ni = int(node.inputs.size());
    if (ni < def.min_inputs || (def.max_inputs >= 0 && ni > def.max_inputs))
      return fail(ctx + " (" + def.name + "): " + std::to_string(ni) + " inputs");
    if (!node.functions.empty()) return fail(ctx + " (" + def.name + "): an op node refers to functions");
    if (node.attrs.values.size() < ops::required_attrs(def) || node.attrs.values.size() > def.attrs.size())
      return fail(ctx + " (" + def.name + "): " + std::to_string(node.attrs.values.size()) + " attributes, expected " +
                  std::to_string(def.attrs.size()));
    for (size_t k = 0; k < node.attrs.values.size(); ++k)
      if (node.attrs.values[k].kind != def.attrs[k].kind)
        return fail(ctx + " (" + def.name + "): attribute '" + def.attrs[k].name + "' has the wrong kind");
    // After the kinds: output_count reads the attributes.
    const size_t outputs = ops::output_count(node.op, node.attrs);
    if (node.outputs.size() != outputs)
      return fail(ctx + " (" + def.name + "): " + std::to_string(node.outputs.size()) + " outputs, expected " +
                  std::to_string(outputs));
    return true;
  }

  bool check_control(int32_t f, size_t n, const Node& node) {
    const Function& fn = m_.functions[size_t(f)];
    const std::string ctx = where(f, n);
    if (!node.attrs.values.empty()) return fail(ctx + ": a control node has attributes");
    const size_t want = node.kind == NodeKind::kWhile ? 2 : node.kind == NodeKind::kIf ? 2 : 1;
    if (node.functions.size() != want)
      return fail(ctx + ": refers to " + std::to_string(node.functions.size()) + " functions, expected " +
                  std::to_string(want));
    for (int32_t g : node.functions)
      if (g < 0 || size_t(g) >= m_.functions.size())
        return fail(ctx + ": function id " + std::to_string(g) + " out of range");
    switch (node.kind) {
      case NodeKind::kIf: {
        if (node.inputs.empty() || !is_bool_scalar(fn.values[size_t(node.inputs[0])].type))
          return fail(ctx + ": an if's first input must be a bool scalar");
        std::vector<int32_t> args(node.inputs.begin() + 1, node.inputs.end());
        for (int32_t g : node.functions) {
          const Function& branch = m_.functions[size_t(g)];
          if (!check_boundary(ctx + " (if)", "inputs", fn, args, branch, branch.params)) return false;
          if (!check_boundary(ctx + " (if)", "outputs", fn, node.outputs, branch, branch.results)) return false;
        }
        return true;
      }
      case NodeKind::kWhile: {
        const Function& cond = m_.functions[size_t(node.functions[0])];
        const Function& body = m_.functions[size_t(node.functions[1])];
        if (!check_boundary(ctx + " (while cond)", "inputs", fn, node.inputs, cond, cond.params)) return false;
        if (cond.results.size() != 1 || !is_bool_scalar(cond.values[size_t(cond.results[0])].type))
          return fail(ctx + ": while condition '" + cond.name + "' must return one bool scalar");
        if (!check_boundary(ctx + " (while body)", "inputs", fn, node.inputs, body, body.params)) return false;
        // An iteration's results are the next one's parameters: the carried types
        // (a relaxed dim is symbolic there, whatever the initial value's).
        if (!check_boundary(ctx + " (while body)", "outputs", body, body.params, body, body.results)) return false;
        return check_boundary(ctx + " (while)", "outputs", fn, node.outputs, body, body.results);
      }
      case NodeKind::kCall: {
        const Function& callee = m_.functions[size_t(node.functions[0])];
        if (!check_boundary(ctx + " (call)", "inputs", fn, node.inputs, callee, callee.params)) return false;
        return check_boundary(ctx + " (call)", "outputs", fn, node.outputs, callee, callee.results);
      }
      case NodeKind::kOp: break;
    }
    return true;
  }

  bool check_span(const SourceSpan& span, const std::string& ctx) {
    if (span.valid() && m_.sources && span.file >= m_.sources->size())
      return fail(ctx + ": source file id " + std::to_string(span.file) + " out of range");
    return true;
  }

  void check_function(int32_t f) {
    const Function& fn = m_.functions[size_t(f)];
    if (fn.name.empty()) {
      fail("function " + std::to_string(f) + " has no name");
      return;
    }
    const size_t nv = fn.values.size();
    std::vector<bool> defined(nv, false);
    auto in_range = [&](int32_t v) { return v >= 0 && size_t(v) < nv; };
    auto define = [&](int32_t v, const std::string& ctx) {
      if (!in_range(v)) return fail(ctx + ": value id " + std::to_string(v) + " out of range");
      if (defined[size_t(v)]) return fail(ctx + ": value %" + std::to_string(v) + " is defined twice");
      defined[size_t(v)] = true;
      return true;
    };
    auto use = [&](int32_t v, const std::string& ctx) {
      if (!in_range(v)) return fail(ctx + ": value id " + std::to_string(v) + " out of range");
      if (!defined[size_t(v)]) return fail(ctx + ": value %" + std::to_string(v) + " is used before it is defined");
      return true;
    };

    for (size_t v = 0; v < nv; ++v) {
      const Value& val = fn.values[v];
      const std::string ctx = where(f) + ", value %" + std::to_string(v);
      if (!check_dims(val.type, ctx) || !check_span(val.span, ctx)) return;
      if (val.constant < -1 || (val.constant >= 0 && size_t(val.constant) >= m_.constants.size())) {
        fail(ctx + ": constant id " + std::to_string(val.constant) + " out of range");
        return;
      }
      if (val.constant >= 0) {
        const Constant& k = m_.constants[size_t(val.constant)];
        bool same = k.dtype == val.type.dtype && k.shape.size() == val.type.shape.size();
        for (size_t i = 0; same && i < k.shape.size(); ++i) same = val.type.shape[i] == Dim(k.shape[i]);
        if (!same) {
          fail(ctx + ": type " + m_.format_type(val.type) + " differs from constant #" + std::to_string(val.constant));
          return;
        }
        defined[v] = true;
      }
    }
    for (int32_t p : fn.params) {
      if (in_range(p) && fn.values[size_t(p)].constant >= 0) {
        fail(where(f) + ": parameter %" + std::to_string(p) + " is a constant");
        return;
      }
      if (!define(p, where(f) + ", parameters")) return;
    }
    for (size_t n = 0; n < fn.nodes.size(); ++n) {
      const Node& node = fn.nodes[n];
      const std::string ctx = where(f, n);
      if (!check_span(node.span, ctx)) return;
      for (int32_t v : node.inputs)
        if (!use(v, ctx)) return;
      // Outputs are checked for range before the kind-specific checks read types.
      for (int32_t v : node.outputs)
        if (!in_range(v)) {
          fail(ctx + ": value id " + std::to_string(v) + " out of range");
          return;
        }
      const bool ok = node.kind == NodeKind::kOp ? check_op(f, n, node) : check_control(f, n, node);
      if (!ok) return;
      for (int32_t v : node.outputs)
        if (fn.values[size_t(v)].constant >= 0) {
          fail(ctx + ": output %" + std::to_string(v) + " is a constant");
          return;
        } else if (!define(v, ctx)) {
          return;
        }
    }
    for (int32_t r : fn.results)
      if (!use(r, where(f) + ", results")) return;
  }

  void check_entries() {
    std::unordered_set<std::string> names;
    for (size_t e = 0; e < m_.entries.size(); ++e) {
      const Entry& entry = m_.entries[e];
      const std::string ctx = "entry '" + entry.name + "'";
      if (entry.name.empty()) {
        fail("entry " + std::to_string(e) + " has no name");
        return;
      }
      if (!names.insert(entry.name).second) {
        fail(ctx + " is exported twice");
        return;
      }
      if (entry.function < 0 || size_t(entry.function) >= m_.functions.size()) {
        fail(ctx + ": function id " + std::to_string(entry.function) + " out of range");
        return;
      }
      const Function& fn = m_.functions[size_t(entry.function)];
      if (entry.input_names.size() + entry.reads.size() != fn.params.size() ||
          entry.output_names.size() + entry.writes.size() != fn.results.size()) {
        fail(ctx + ": " + std::to_string(entry.input_names.size()) + " input and " +
             std::to_string(entry.output_names.size()) + " output names, " + std::to_string(entry.reads.size()) +
             " variables read and " + std::to_string(entry.writes.size()) + " assigned, for a function with " +
             std::to_string(fn.params.size()) + " parameters and " + std::to_string(fn.results.size()) + " results");
        return;
      }
      if (std::string problem = variable_problem(entry, fn); !problem.empty()) {
        fail(ctx + ": " + problem);
        return;
      }
      for (const auto* list : {&entry.input_names, &entry.output_names}) {
        std::unordered_set<std::string> seen;
        for (const std::string& n : *list)
          if (n.empty() || !seen.insert(n).second) {
            fail(ctx + ": empty or repeated signature name '" + n + "'");
            return;
          }
      }
    }
  }

  // Each variable an entry reads or assigns exists, once each, with the type of the
  // parameter or result it is bound to.
  std::string variable_problem(const Entry& entry, const Function& fn) const {
    for (size_t pass = 0; pass < 2; ++pass) {
      const std::vector<int32_t>& list = pass == 0 ? entry.reads : entry.writes;
      const size_t first = pass == 0 ? entry.input_names.size() : entry.output_names.size();
      std::unordered_set<int32_t> seen;
      for (size_t k = 0; k < list.size(); ++k) {
        const int32_t v = list[k];
        if (v < 0 || size_t(v) >= m_.variables.size() || !seen.insert(v).second)
          return "variable id " + std::to_string(v) + " out of range or repeated";
        const int32_t id = pass == 0 ? fn.params[first + k] : fn.results[first + k];
        if (!(fn.values[size_t(id)].type == m_.variables[size_t(v)].type))
          return "variable '" + m_.variables[size_t(v)].name + "' bound to a value of another type";
      }
    }
    return {};
  }

  const Module& m_;
  std::string error_;
};

}  // namespace

std::string verify(const Module& m) { return Verifier(m).run(); }

}  // namespace sg::compiler::ir
