// The structures and values a staged loop carries: their leaves and paths, whether
// two are the same, and the instances and containers a loop watches.
#include "staging/staged_loop_internal.h"

namespace sg::compiler::staging::loop_detail {

std::string shown_name(const std::string& name) {
  if (name.rfind("$var.", 0) == 0) return "variable '" + name.substr(5) + "'";
  return name[0] == '$' ? "the loop counter" : "variable '" + name + "'";
}

// A return value's tensors and numbers, depth first (tuples and dicts within).
void return_leaves(Stager& st, const Value& v, std::vector<Value>& leaves, SourceSpan span, const std::string& where) {
  if (v.is<TuplePtr>()) {
    for (const Value& item : *v.as<TuplePtr>()) return_leaves(st, item, leaves, span, where);
  } else if (v.is<DictPtr>()) {
    for (const auto& item : v.as<DictPtr>()->items) return_leaves(st, item.second, leaves, span, where);
  } else if (v.is_tensor() || v.is_number()) {
    leaves.push_back(v);
  } else {
    st.fail(span, "returning a " + type_name(v) + " from inside the staged " + where +
                      " is not supported; return tensors (alone, in a tuple or in a dict)");
  }
}

// The items of a tuple or list; null for anything else.
const std::vector<Value>* sequence_items(const Value& v) {
  if (v.is<TuplePtr>()) return &*v.as<TuplePtr>();
  if (v.is<ListPtr>()) return &v.as<ListPtr>()->items;
  return nullptr;
}

// An attribute of an instance carried by a staged loop: tensors, numbers and
// containers of them; other attributes (strings, functions, classes) stay as they are.
bool carried_item(const Value& v) {
  return v.is_tensor() || v.is_number() || v.is<TuplePtr>() || v.is<ListPtr>() || v.is<DictPtr>() ||
         v.is<InstancePtr>();
}

// `shape` with its leaves replaced, in order, by leaves[k...] (a list is a new
// list: a loop body's item assignments stay in the body).
Value rebuild(const Value& shape, const std::vector<Value>& leaves, size_t& k) {
  if (const std::vector<Value>* items = sequence_items(shape)) {
    std::vector<Value> out;
    for (const Value& item : *items) out.push_back(rebuild(item, leaves, k));
    return shape.is<TuplePtr>() ? make_tuple(std::move(out)) : make_list(std::move(out));
  }
  if (shape.is<DictPtr>()) {
    auto d = std::make_shared<DictObj>();
    for (const auto& [key, item] : shape.as<DictPtr>()->items) d->items.emplace_back(key, rebuild(item, leaves, k));
    return Value(DictPtr(d));
  }
  if (shape.is<InstancePtr>()) {  // a record or object rebound in the loop: a new one of its class
    auto obj = std::make_shared<InstanceObj>(*shape.as<InstancePtr>());
    obj->attrs = std::make_shared<DictObj>();
    for (const auto& [key, item] : shape.as<InstancePtr>()->attrs->items)
      obj->attrs->items.emplace_back(key, carried_item(item) ? rebuild(item, leaves, k) : item);
    return Value(obj);
  }
  return leaves[k++];
}

// A tuple, list or dict (nested ones too) of tensors and numbers: carried by a
// staged loop as one value per leaf, rebuilt around them in the body, the cond
// and after the loop. `path` names each leaf for messages ("state[0]").
bool leaves_of(const Value& v, const std::string& path, std::vector<std::pair<std::string, Value>>& out) {
  if (v.is_tensor() || v.is_number()) {
    out.emplace_back(path, v);
    return true;
  }
  if (const std::vector<Value>* items = sequence_items(v)) {
    for (size_t k = 0; k < items->size(); ++k)
      if (!leaves_of((*items)[k], path + "[" + std::to_string(k) + "]", out)) return false;
    return true;
  }
  if (v.is<DictPtr>()) {
    for (const auto& [key, item] : v.as<DictPtr>()->items)
      if (!leaves_of(item, path + "[" + py_repr(key) + "]", out)) return false;
    return true;
  }
  if (v.is<InstancePtr>()) {
    for (const auto& [key, item] : v.as<InstancePtr>()->attrs->items)
      if (carried_item(item) && !leaves_of(item, path + "." + py_str(key), out)) return false;
    return true;
  }
  return false;
}

// Whether `v` has `shape`'s containers (kinds, lengths, keys in order).
bool same_structure(const Value& shape, const Value& v) {
  const std::vector<Value>* a = sequence_items(shape);
  const std::vector<Value>* b = sequence_items(v);
  if (shape.is<InstancePtr>()) {
    if (!v.is<InstancePtr>() || v.as<InstancePtr>()->cls != shape.as<InstancePtr>()->cls) return false;
    const auto &da = shape.as<InstancePtr>()->attrs->items, &db = v.as<InstancePtr>()->attrs->items;
    if (da.size() != db.size()) return false;
    for (size_t k = 0; k < da.size(); ++k)
      if (!static_equal(da[k].first, db[k].first).value_or(false) || carried_item(da[k].second) != carried_item(db[k].second) ||
          (carried_item(da[k].second) && !same_structure(da[k].second, db[k].second)))
        return false;
    return true;
  }
  if (v.is<InstancePtr>()) return false;
  if (!a && !shape.is<DictPtr>()) return !b && !v.is<DictPtr>();
  if (shape.is<DictPtr>()) {
    if (!v.is<DictPtr>()) return false;
    const auto &da = shape.as<DictPtr>()->items, &db = v.as<DictPtr>()->items;
    if (da.size() != db.size()) return false;
    for (size_t k = 0; k < da.size(); ++k)
      if (!static_equal(da[k].first, db[k].first).value_or(false) || !same_structure(da[k].second, db[k].second))
        return false;
    return true;
  }
  if (!b || shape.is<TuplePtr>() != v.is<TuplePtr>() || a->size() != b->size()) return false;
  for (size_t k = 0; k < a->size(); ++k)
    if (!same_structure((*a)[k], (*b)[k])) return false;
  return true;
}

namespace {

std::string kind_of(const Value& v) {
  if (v.is<TuplePtr>()) return "a tuple of " + std::to_string(v.as<TuplePtr>()->size()) + " items";
  if (v.is<ListPtr>()) return "a list of " + std::to_string(v.as<ListPtr>()->items.size()) + " items";
  if (v.is<DictPtr>()) {
    std::string keys;
    for (const auto& [k, item] : v.as<DictPtr>()->items) keys += (keys.empty() ? "" : ", ") + py_repr(k);
    return "a dict with keys [" + keys + "]";
  }
  return "a " + type_name(v);
}

}  // namespace

std::string structure_difference(const Value& shape, const Value& v, const std::string& path) {
  const std::vector<Value>* a = sequence_items(shape);
  const std::vector<Value>* b = sequence_items(v);
  if (a && b && shape.is<TuplePtr>() == v.is<TuplePtr>() && a->size() == b->size()) {
    for (size_t k = 0; k < a->size(); ++k) {
      std::string d = structure_difference((*a)[k], (*b)[k], path + "[" + std::to_string(k) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  if (shape.is<DictPtr>() && v.is<DictPtr>() && kind_of(shape) == kind_of(v)) {
    const auto &da = shape.as<DictPtr>()->items, &db = v.as<DictPtr>()->items;
    for (size_t k = 0; k < da.size(); ++k) {
      std::string d = structure_difference(da[k].second, db[k].second, path + "[" + py_repr(da[k].first) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  const bool leaf_a = shape.is_tensor() || shape.is_number(), leaf_b = v.is_tensor() || v.is_number();
  if (leaf_a && leaf_b) return "";
  if (!a && !b && !shape.is<DictPtr>() && !v.is<DictPtr>() && !leaf_a && !leaf_b && same_value(shape, v)) return "";
  const std::string shown = path.find('[') == std::string::npos ? "variable '" + path + "'" : "`" + path + "`";
  return shown + " is " + kind_of(shape) + " before the loop and " + kind_of(v) + " after an iteration";
}

void watch_instances(const std::string& path, const Value& v, std::vector<AttrWatch>& out, int depth) {
  if (depth > 8) return;
  if (v.is<InstancePtr>()) {
    const InstancePtr& o = v.as<InstancePtr>();
    for (const AttrWatch& w : out)
      if (w.obj == o) return;
    out.push_back(AttrWatch{o, path, o->attrs->items});
    for (const auto& [k, item] : o->attrs->items) watch_instances(path + "." + py_str(k), item, out, depth + 1);
  } else if (const std::vector<Value>* items = v.is<TuplePtr>() ? &*v.as<TuplePtr>()
                                               : v.is<ListPtr>() ? &v.as<ListPtr>()->items : nullptr) {
    for (size_t i = 0; i < items->size(); ++i) watch_instances(path + "[" + std::to_string(i) + "]", (*items)[i], out, depth + 1);
  } else if (v.is<DictPtr>()) {
    for (const auto& [k, item] : v.as<DictPtr>()->items) watch_instances(path + "[" + py_repr(k) + "]", item, out, depth + 1);
  }
}

bool same_value(const Value& a, const Value& b) {
  if (a.data.index() != b.data.index()) return false;
  if (a.is<Staged>()) return a.as<Staged>().fn == b.as<Staged>().fn && a.as<Staged>().id == b.as<Staged>().id;
  if (a.is<StaticTensorPtr>()) return a.as<StaticTensorPtr>() == b.as<StaticTensorPtr>();
  if (a.is<ListPtr>()) return a.as<ListPtr>() == b.as<ListPtr>();
  if (a.is<DictPtr>()) return a.as<DictPtr>() == b.as<DictPtr>();
  if (a.is<InstancePtr>()) return a.as<InstancePtr>() == b.as<InstancePtr>();
  if (a.is<TuplePtr>()) {
    const auto &x = *a.as<TuplePtr>(), &y = *b.as<TuplePtr>();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_value(x[i], y[i])) return false;
    return true;
  }
  return static_equal(a, b).value_or(true);
}

// The lists and dicts reachable from `v` (through tuples, lists and dicts).
void collect_containers(const Value& v, std::set<const void*>& out) {
  if (v.is<ListPtr>()) {
    if (!out.insert(v.as<ListPtr>().get()).second) return;
    for (const Value& item : v.as<ListPtr>()->items) collect_containers(item, out);
  } else if (v.is<DictPtr>()) {
    if (!out.insert(v.as<DictPtr>().get()).second) return;
    for (const auto& item : v.as<DictPtr>()->items) collect_containers(item.second, out);
  } else if (v.is<TuplePtr>()) {
    for (const Value& item : *v.as<TuplePtr>()) collect_containers(item, out);
  }
}

}  // namespace sg::compiler::staging::loop_detail
