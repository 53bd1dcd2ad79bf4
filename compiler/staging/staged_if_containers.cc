// The lists and dicts a staged `if` may change (staged_if_internal.h): each is
// recorded before the branches, its length watched while they run (a change of length
// must be the same on both paths), and the items either branch changed join like
// variables.
#include "staging/staged_if_internal.h"

namespace sg::compiler::staging {
namespace if_detail {

void collect_containers(const std::string& name, const Value& v, std::vector<Container>& out) {
  auto seen = [&](const void* p) {
    for (const Container& c : out)
      if (c.list.get() == p || c.dict.get() == p) return true;
    return false;
  };
  if (v.is<ListPtr>() && !seen(v.as<ListPtr>().get())) {
    const ListPtr& l = v.as<ListPtr>();
    out.push_back(Container{name, l, nullptr, l->items, {}});
    for (size_t i = 0; i < l->items.size(); ++i)
      collect_containers(name + "[" + std::to_string(i) + "]", l->items[i], out);
  } else if (v.is<DictPtr>() && !seen(v.as<DictPtr>().get())) {
    const DictPtr& d = v.as<DictPtr>();
    out.push_back(Container{name, nullptr, d, {}, d->items});
    for (const auto& [key, item] : d->items) collect_containers(name + "[" + py_repr(key) + "]", item, out);
  } else if (v.is<TuplePtr>()) {
    const auto& items = *v.as<TuplePtr>();
    for (size_t i = 0; i < items.size(); ++i) collect_containers(name + "[" + std::to_string(i) + "]", items[i], out);
  } else if (v.is<InstancePtr>() && !seen(v.as<InstancePtr>()->attrs.get())) {
    // An instance's attributes change in a branch as a dict's items do.
    const DictPtr& d = v.as<InstancePtr>()->attrs;
    out.push_back(Container{name, nullptr, d, {}, d->items});
    for (const auto& [key, item] : d->items) collect_containers(name + "." + py_str(key), item, out);
  }
}

std::string keys_text(const std::vector<std::pair<Value, Value>>& kv) {
  std::string out = "[";
  for (size_t k = 0; k < kv.size(); ++k) out += (k ? ", " : "") + py_repr(kv[k].first);
  return out + "]";
}

}  // namespace if_detail

using namespace if_detail;

namespace {

bool same_items(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_binding(a[i], b[i])) return false;
  return true;
}

size_t size_of(const void* container, bool is_list) {
  return is_list ? static_cast<const ListObj*>(container)->items.size()
                 : static_cast<const DictObj*>(container)->items.size();
}

bool same_dict(const std::vector<std::pair<Value, Value>>& x, const std::vector<std::pair<Value, Value>>& y) {
  if (x.size() != y.size()) return false;
  for (size_t k = 0; k < x.size(); ++k)
    if (!same_binding(x[k].first, y[k].first) || !same_binding(x[k].second, y[k].second)) return false;
  return true;
}

}  // namespace

void note_size_changes(ControlState& cs, SourceSpan span) {
  for (std::vector<ControlState::SizeWatch>& level : cs.size_watches)
    for (ControlState::SizeWatch& w : level)
      if (!w.changed && size_of(w.container, w.is_list) != w.size) w.changed = span;
}

// Lists and dicts visible before the `if`: each branch starts from their items
// as they are now and leaves them so again; the joined items are set after.
void BranchStaging::watch_containers() {
  for (const Scope* sp = &sc_; sp; sp = sp->parent().get())
    for (const auto& [name, v] : sp->vars()) collect_containers(name, v, containers_);
  std::vector<std::vector<ControlState::SizeWatch>>& watches = st_.control().size_watches;
  watches.emplace_back();
  for (const Container& c : containers_)
    watches.back().push_back(c.list ? ControlState::SizeWatch{c.list.get(), true, c.list_items.size(), {}}
                                    : ControlState::SizeWatch{c.dict.get(), false, c.dict_items.size(), {}});
}

// Reported at the statement that changed the length (the then branch's first),
// with the `if` as a note.
void BranchStaging::size_mismatch(size_t i, const std::string& kind, const std::string& then_has,
                                  const std::string& else_has) {
  const std::optional<SourceSpan>& at = then_b_.size_changed[i] ? then_b_.size_changed[i] : else_b_.size_changed[i];
  st_.fail(at.value_or(span_),
           kind + " " + quoted(containers_[i].name) + " has " + then_has + " of " + (rest_ ? construct_ : "the staged `" + label_ + "`") + " at line " +
               std::to_string(span_.line) + " and " + else_has + " in the else branch; both paths must leave it " +
               (kind == "list" ? "with one length (a list appended to inside a staged loop becomes a tensor list, "
                                 "which may grow)"
                               : "with the same keys in the same order"),
           {Note{span_, rest_ ? construct_ : "the staged `" + label_ + "`"}});
}

// A dict an enclosing staged loop carries, given a key by one branch only: the loop
// is staged again with the key in the dict from before it (DictKeyRetry), so both
// branches have it and the flag of the one that assigned it says so.
void BranchStaging::added_key_retry(size_t i, const std::vector<std::pair<Value, Value>>& t,
                                    const std::vector<std::pair<Value, Value>>& e) {
  const std::vector<ControlState::LoopContainers>& loops = st_.control().loop_containers;
  for (size_t l = loops.size(); l > 0; --l) {
    const auto carried = loops[l - 1].carried_dicts.find(containers_[i].dict.get());
    if (carried == loops[l - 1].carried_dicts.end()) continue;
    const auto& more = t.size() > e.size() ? t : e;
    const auto& fewer = t.size() > e.size() ? e : t;
    const std::optional<SourceSpan>& at = then_b_.size_changed[i] ? then_b_.size_changed[i] : else_b_.size_changed[i];
    for (const auto& [key, v] : more) {
      bool known = false;
      for (const auto& kv : fewer) known = known || static_equal(kv.first, key).value_or(false);
      if (!known && (v.is_tensor() || v.is_number()))
        throw DictKeyRetry{loops[l - 1].token, carried->second, key,
                           st_.tensor_type(st_.to_tensor(v, std::nullopt, span_)), at.value_or(span_)};
    }
    return;
  }
}

// A branch that certainly returned leaves the lists and dicts as the other one
// does, with stand-ins for the items that one changed (never read, as above).
void BranchStaging::stand_in_returned_containers() {
  for (size_t i = 0; i < containers_.size(); ++i) {
    Branch& keep = *branches_[1 - returned_side_];
    Branch& gone = *branches_[returned_side_];
    const Container& c = containers_[i];
    bool ok = true;
    in_branch(returned_side_, [&] {
      if (c.list) {
        std::vector<Value> kept_items;
        for (size_t k = 0; ok && k < keep.list_items[i].size(); ++k) {
          const Value& v = keep.list_items[i][k];
          std::optional<Value> item =
              k < c.list_items.size() && same_binding(v, c.list_items[k]) ? std::optional<Value>(v) : stand_in_like(v);
          if (item) kept_items.push_back(std::move(*item));
          else ok = false;
        }
        if (ok) gone.list_items[i] = std::move(kept_items);
      } else {
        std::vector<std::pair<Value, Value>> kept_items;
        for (size_t k = 0; ok && k < keep.dict_items[i].size(); ++k) {
          const auto& [key, v] = keep.dict_items[i][k];
          std::optional<Value> item = k < c.dict_items.size() && same_binding(v, c.dict_items[k].second)
                                          ? std::optional<Value>(v)
                                          : stand_in_like(v);
          if (item) kept_items.emplace_back(key, std::move(*item));
          else ok = false;
        }
        if (ok) gone.dict_items[i] = std::move(kept_items);
      }
    });
    if (ok) gone.size_changed[i].reset();
  }
}

// Lists and dicts a branch changed: both sides leave the same length (the same
// keys in the same order), and the items that differ join like variables.
void BranchStaging::join_containers() {
  auto items = [](size_t n) { return std::to_string(n) + (n == 1 ? " item" : " items"); };
  for (size_t i = 0; i < containers_.size(); ++i) {
    const Container& c = containers_[i];
    const std::string root = c.name.substr(0, c.name.find('['));
    ContainerJoin cj{i, {}};
    if (c.list) {
      const std::vector<Value>&t = then_b_.list_items[i], &e = else_b_.list_items[i];
      if (same_items(t, c.list_items) && same_items(e, c.list_items)) continue;
      if (t.size() != e.size()) size_mismatch(i, "list", items(t.size()) + " in the then branch", items(e.size()));
      for (size_t k = 0; k < t.size(); ++k)
        if (!same_binding(t[k], e[k]))
          cj.items.emplace_back(k, join(root, "item " + std::to_string(k) + " of list " + quoted(c.name), t[k], e[k]));
    } else {
      const auto &t = then_b_.dict_items[i], &e = else_b_.dict_items[i];
      if (same_dict(t, c.dict_items) && same_dict(e, c.dict_items)) continue;
      bool same_keys = t.size() == e.size();
      for (size_t k = 0; same_keys && k < t.size(); ++k) same_keys = static_equal(t[k].first, e[k].first).value_or(false);
      if (!same_keys) {
        added_key_retry(i, t, e);
        size_mismatch(i, "dict", "keys " + keys_text(t) + " in the then branch", "keys " + keys_text(e));
      }
      for (size_t k = 0; k < t.size(); ++k)
        if (!same_binding(t[k].second, e[k].second))
          cj.items.emplace_back(k, join(root, "`" + c.name + "[" + py_repr(t[k].first) + "]`", t[k].second,
                                        e[k].second));
    }
    container_joins_.push_back(std::move(cj));
  }
}

}  // namespace sg::compiler::staging
