// Methods of values: tensor methods (NumPy's names) and the list, dict and str
// methods a staged program may use at compile time.
#include <algorithm>
#include <optional>

#include "staging/arg_binding.h"
#include "staging/control_state.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {

// Tensor methods: NumPy's names, most forwarded to the sg function of that name.
Value Stager::call_tensor_method(const BoundMethod& m, Args& a) {
  const Value& self = *m.self;
  const std::string& name = m.name;
  const SourceSpan span = a.span;
  if (name == "astype") {
    BoundArgs b(*this, a, name, {"dtype"}, 1);
    return astype(*this, self, b[0], span);
  }
  if (name == "reshape" || name == "transpose") {
    // x.reshape(2, 3) and x.reshape((2, 3)) alike; the same for transpose.
    Value arg;
    if (!a.kw.empty()) fail(span, "x." + name + "() takes positional arguments only");
    if (a.pos.size() == 1) arg = a.pos[0];
    else if (!a.pos.empty()) arg = make_tuple(a.pos);
    if (name == "reshape") {
      if (a.pos.empty()) fail(span, "x.reshape() needs a shape");
      return reshape(*this, self, arg, span);
    }
    return transpose(*this, self, arg, span);
  }
  if (name == "flatten") {
    BoundArgs b(*this, a, name, {}, 0);
    return reshape(*this, self, Value(int64_t(-1)), span);
  }
  if (name == "squeeze") {
    Args forwarded = a;
    forwarded.pos.insert(forwarded.pos.begin(), self);
    return call_sg(name, forwarded);
  }
  // Reductions: x.sum(axis=None, keepdims=False), ...; x.clip(min=, max=) is
  // NumPy's method spelling of sg.clip's a_min and a_max.
  Args forwarded = a;
  if (name == "clip") {
    bool has_max = forwarded.pos.size() >= 2;
    for (auto& [key, value] : forwarded.kw) {
      if (key == "min" || key == "max") key = "a_" + key;
      has_max |= key == "a_max";
    }
    if (!has_max) forwarded.kw.emplace_back("a_max", Value());  // ndarray.clip's max=None
  }
  forwarded.pos.insert(forwarded.pos.begin(), self);
  forwarded.pos_spans.insert(forwarded.pos_spans.begin(), span);
  return call_sg(name, forwarded);
}

// List methods, at compile time; nullopt for a name that is not one.
std::optional<Value> Stager::call_list_method(const BoundMethod& m, Args& a) {
  const Value& self = *m.self;
  const std::string& name = m.name;
  const SourceSpan span = a.span;
  auto& items = self.as<ListPtr>()->items;
  if (name == "append" || name == "extend" || name == "pop" || name == "insert" || name == "remove" ||
      name == "clear" || name == "sort" || name == "reverse") {
    // A staged loop's body is staged once: changing a list made before the loop
    // would happen once at compile time, not once per iteration.
    for (const ControlState::LoopContainers& lc : control().loop_containers)
      if (lc.containers.count(self.as<ListPtr>().get()))
        fail(span, "`" + source_text(span) + "` changes a list made before " + lc.where + ", whose body is "
                       "staged once: it would change the list once at compile time, not at each iteration. "
                       "Inside a staged loop a list made before it may be appended to (by its name: it becomes "
                       "a tensor list) or have its items assigned; " + name + "() is not staged");
  }
  if (name == "append") {
    BoundArgs b(*this, a, name, {"item"}, 1);
    items.push_back(b[0]);
    return Value();
  }
  if (name == "extend") {
    BoundArgs b(*this, a, name, {"items"}, 1);
    for (Value& v : to_list(b[0], span)) items.push_back(std::move(v));
    return Value();
  }
  if (name == "pop") {
    BoundArgs b(*this, a, name, {"index"}, 0);
    if (items.empty()) fail(span, "pop from an empty list");
    int64_t i = b.has(0) ? to_int(b[0], span, "a list index") : -1;
    if (i < 0) i += int64_t(items.size());
    if (i < 0 || i >= int64_t(items.size())) fail(span, "pop index out of range");
    Value v = items[size_t(i)];
    items.erase(items.begin() + i);
    return v;
  }
  if (name == "sort") {  // as sorted(), in place
    if (!a.pos.empty()) fail(span, "sort() takes no positional arguments");
    Args sorted_args = a;
    sorted_args.pos = {self};
    items = call_builtin("sorted", sorted_args).as<ListPtr>()->items;
    return Value();
  }
  if (name == "reverse") {
    BoundArgs b(*this, a, name, {}, 0);
    std::reverse(items.begin(), items.end());
    return Value();
  }
  if (name == "index") {
    BoundArgs b(*this, a, name, {"value"}, 1);
    for (size_t i = 0; i < items.size(); ++i)
      if (static_equal(items[i], b[0]).value_or(false)) return Value(int64_t(i));
    fail(span, py_repr(b[0]) + " is not in list");
  }
  return std::nullopt;
}

Value Stager::call_method(const BoundMethod& m, Args& a) {
  if (is_custom_op(m)) return call_custom_op(*this, m, a);
  const Value& self = *m.self;
  const std::string& name = m.name;
  const SourceSpan span = a.span;
  if (self.is_tensor()) return call_tensor_method(m, a);
  if (self.is<ListPtr>()) {
    if (std::optional<Value> v = call_list_method(m, a)) return std::move(*v);
  }
  if (self.is<DictPtr>()) {
    const auto& items = self.as<DictPtr>()->items;
    if (name == "get") {
      BoundArgs b(*this, a, name, {"key", "default"}, 1);
      for (const auto& kv : items)
        if (static_equal(kv.first, b[0]).value_or(false)) return kv.second;
      return b.get(1, Value());
    }
    BoundArgs b(*this, a, name, {}, 0);
    std::vector<Value> out;
    for (const auto& [k, v] : items)
      out.push_back(name == "keys" ? k : name == "values" ? v : make_tuple({k, v}));
    return make_list(std::move(out));
  }
  if (self.is<std::string>() && name == "join") {
    BoundArgs b(*this, a, name, {"iterable"}, 1);
    std::string out;
    bool first = true;
    for (const Value& v : to_list(b[0], span)) {
      if (!v.is<std::string>()) fail(span, "join: expected str items, got " + type_name(v));
      out += (first ? "" : self.as<std::string>()) + v.as<std::string>();
      first = false;
    }
    return Value(out);
  }
  fail(span, "'" + type_name(self) + "' object has no method '" + name + "'");
}

}  // namespace sg::compiler::staging
