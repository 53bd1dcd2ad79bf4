// sg.tree_map(fn, tree, *rest) (SPEC §12): fn called on the leaves of `tree` and
// the matching leaves of each of `rest`, and `tree`'s structure rebuilt around the
// results. Containers are tuples, lists, dicts and instances (named tuples,
// dataclasses, the program's objects); leaves are tensors and Python floats;
// anything else (None, strings, functions) is kept as `tree` has it. The
// structures must match: the same containers, lengths, keys and classes.
#include <string>
#include <vector>

#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

// As sg.grad takes them: tensors and Python floats (ints, such as sizes, are settings).
bool is_leaf(const Value& v) { return v.is_tensor() || v.is<double>(); }

// The first difference between the structures of a and b at `path`, or "".
std::string mismatch(const Value& a, const Value& b, const std::string& path) {
  const std::string at = path.empty() ? "the top" : "'" + path + "'";
  auto sub = [&](const std::string& k) { return path.empty() ? k : path + "." + k; };
  if (is_leaf(a) || is_leaf(b))
    return is_leaf(a) && is_leaf(b) ? "" : "a " + type_name(a) + " against a " + type_name(b) + " at " + at;
  auto items = [&](const std::vector<Value>& x, const std::vector<Value>& y) -> std::string {
    if (x.size() != y.size())
      return std::to_string(x.size()) + " items against " + std::to_string(y.size()) + " at " + at;
    for (size_t i = 0; i < x.size(); ++i)
      if (std::string m = mismatch(x[i], y[i], sub(std::to_string(i))); !m.empty()) return m;
    return "";
  };
  auto pairs = [&](const std::vector<std::pair<Value, Value>>& x,
                   const std::vector<std::pair<Value, Value>>& y) -> std::string {
    if (x.size() != y.size())
      return std::to_string(x.size()) + " items against " + std::to_string(y.size()) + " at " + at;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!(py_repr(x[i].first) == py_repr(y[i].first)))
        return "key " + py_repr(x[i].first) + " against " + py_repr(y[i].first) + " at " + at;
      if (std::string m = mismatch(x[i].second, y[i].second, sub(py_str(x[i].first))); !m.empty()) return m;
    }
    return "";
  };
  if (a.is<TuplePtr>() && b.is<TuplePtr>()) return items(*a.as<TuplePtr>(), *b.as<TuplePtr>());
  if (a.is<ListPtr>() && b.is<ListPtr>()) return items(a.as<ListPtr>()->items, b.as<ListPtr>()->items);
  if (a.is<DictPtr>() && b.is<DictPtr>()) return pairs(a.as<DictPtr>()->items, b.as<DictPtr>()->items);
  if (a.is<InstancePtr>() && b.is<InstancePtr>()) {
    const InstanceObj& x = *a.as<InstancePtr>();
    const InstanceObj& y = *b.as<InstancePtr>();
    if (x.cls != y.cls) return "a '" + x.cls->name + "' against a '" + y.cls->name + "' at " + at;
    return pairs(x.attrs->items, y.attrs->items);
  }
  if (a.is<TuplePtr>() || a.is<ListPtr>() || a.is<DictPtr>() || a.is<InstancePtr>() || b.is<TuplePtr>() ||
      b.is<ListPtr>() || b.is<DictPtr>() || b.is<InstancePtr>())
    return "a " + type_name(a) + " against a " + type_name(b) + " at " + at;
  return "";
}

// `trees[0]` with each leaf replaced by fn(leaf of trees[0], leaf of trees[1], ...).
Value map_leaves(Stager& s, const Value& fn, const std::vector<Value>& trees, SourceSpan span) {
  const Value& t = trees[0];
  auto child = [&](auto pick) {
    std::vector<Value> sub;
    for (const Value& x : trees) sub.push_back(pick(x));
    return map_leaves(s, fn, sub, span);
  };
  if (is_leaf(t)) {
    Args call;
    call.span = span;
    for (const Value& x : trees) {
      call.pos.push_back(x);
      call.pos_spans.push_back(span);
    }
    return s.call_value(fn, call);
  }
  if (t.is<TuplePtr>() || t.is<ListPtr>()) {
    auto items_of = [](const Value& x) -> const std::vector<Value>& {
      return x.is<TuplePtr>() ? *x.as<TuplePtr>() : x.as<ListPtr>()->items;
    };
    std::vector<Value> out;
    for (size_t i = 0; i < items_of(t).size(); ++i) out.push_back(child([&](const Value& x) { return items_of(x)[i]; }));
    return t.is<TuplePtr>() ? make_tuple(std::move(out)) : make_list(std::move(out));
  }
  if (t.is<DictPtr>() || t.is<InstancePtr>()) {
    auto items_of = [](const Value& x) -> const std::vector<std::pair<Value, Value>>& {
      return x.is<DictPtr>() ? x.as<DictPtr>()->items : x.as<InstancePtr>()->attrs->items;
    };
    auto d = std::make_shared<DictObj>();
    for (size_t i = 0; i < items_of(t).size(); ++i)
      d->items.emplace_back(items_of(t)[i].first, child([&](const Value& x) { return items_of(x)[i].second; }));
    if (t.is<DictPtr>()) return Value(DictPtr(d));
    auto obj = std::make_shared<InstanceObj>(*t.as<InstancePtr>());
    obj->attrs = d;
    return Value(InstancePtr(obj));
  }
  return t;
}

}  // namespace

Value sg_tree(Stager& s, const Args& a, const std::string& name) {
  if (!a.kw.empty()) s.fail(a.span, "sg." + name + "() takes no keyword arguments");
  if (a.pos.size() < 2) s.fail(a.span, "sg.tree_map(fn, tree, *rest) needs a function and at least one structure");
  const std::vector<Value> trees(a.pos.begin() + 1, a.pos.end());
  for (size_t k = 1; k < trees.size(); ++k)
    if (std::string m = mismatch(trees[0], trees[k], ""); !m.empty())
      s.fail(a.pos_spans.size() > k + 1 ? a.pos_spans[k + 1] : a.span,
             "sg.tree_map: structure " + std::to_string(k + 1) + " does not match the first: " + m);
  return map_leaves(s, a.pos[0], trees, a.span);
}

}  // namespace sg::compiler::staging
