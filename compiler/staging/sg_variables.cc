// sg.variables: program-level state (SPEC §12). Every tensor or number in the
// structures given becomes a module variable named by its path ("params.0.w",
// "step"), with its value as the initial one. In an entry a read gives the value at
// the start of the run (a parameter of the entry bound to the variable), whatever
// the run assigned since. The value to store is like a local of the entry: an
// assignment rebinds it, a staged if joins it and a staged loop carries it
// (variable_current_), and what it holds when the entry ends becomes results after
// the outputs; the runtime stores them together when the run succeeds.
#include "staging/sg_variables.h"

#include <algorithm>
#include <functional>

namespace sg::compiler::staging {

namespace {

using Leaf = std::pair<std::string, Value>;

std::string join(const std::string& path, const std::string& part) { return path.empty() ? part : path + "." + part; }

// The tensors and numbers of a structure with their paths, in order (as entry
// results are named, SPEC §2). None and strings are settings, not state.
void leaves_of(const Value& v, const std::string& path, std::vector<Leaf>& out) {
  if (v.is<DictPtr>()) {
    for (const auto& [k, item] : v.as<DictPtr>()->items)
      if (k.is<std::string>()) leaves_of(item, join(path, k.as<std::string>()), out);
  } else if (v.is<TuplePtr>() || v.is<ListPtr>()) {
    const auto& items = v.is<TuplePtr>() ? *v.as<TuplePtr>() : v.as<ListPtr>()->items;
    for (size_t i = 0; i < items.size(); ++i) leaves_of(items[i], join(path, std::to_string(i)), out);
  } else if (v.is<InstancePtr>()) {
    for (const auto& [k, item] : v.as<InstancePtr>()->attrs->items)
      if (k.is<std::string>()) leaves_of(item, join(path, k.as<std::string>()), out);
  } else if (v.is_tensor() || v.is_number()) {
    out.emplace_back(path, v);
  }
}

// The structure of `v` with each leaf replaced by `leaf(path)`.
Value map_leaves(const Value& v, const std::string& path, const std::function<Value(const std::string&)>& leaf) {
  if (v.is<DictPtr>()) {
    auto d = std::make_shared<DictObj>();
    for (const auto& [k, item] : v.as<DictPtr>()->items)
      d->items.emplace_back(k, k.is<std::string>() ? map_leaves(item, join(path, k.as<std::string>()), leaf) : item);
    return Value(d);
  }
  if (v.is<TuplePtr>() || v.is<ListPtr>()) {
    const auto& items = v.is<TuplePtr>() ? *v.as<TuplePtr>() : v.as<ListPtr>()->items;
    std::vector<Value> out;
    for (size_t i = 0; i < items.size(); ++i) out.push_back(map_leaves(items[i], join(path, std::to_string(i)), leaf));
    return v.is<TuplePtr>() ? make_tuple(std::move(out)) : make_list(std::move(out));
  }
  if (v.is<InstancePtr>()) {
    auto obj = std::make_shared<InstanceObj>();
    obj->cls = v.as<InstancePtr>()->cls;
    obj->attrs = std::make_shared<DictObj>();
    for (const auto& [k, item] : v.as<InstancePtr>()->attrs->items)
      obj->attrs->items.emplace_back(k, k.is<std::string>() ? map_leaves(item, join(path, k.as<std::string>()), leaf) : item);
    return Value(obj);
  }
  if (v.is_tensor() || v.is_number()) return leaf(path);
  return v;
}

}  // namespace

Value Stager::make_variables(const Args& args) { return variables().make(args); }

Value ProgramVariables::make(const Args& args) {
  if (!args.pos.empty())
    s_.fail(args.span, "sg.variables takes its state as keyword arguments: sg.variables(params=..., step=0)");
  if (entry_builder_ != nullptr)
    s_.fail(args.span, "sg.variables declares program-level state: call it at module level, outside the entries");
  auto vars = std::make_shared<VariablesObj>();
  for (const auto& [name, value] : args.kw) {
    std::vector<Leaf> leaves;
    leaves_of(value, name, leaves);
    for (const auto& [path, leaf] : leaves) {
      if (leaf.is<Staged>()) s_.fail(args.span, "variable '" + path + "' needs a value known when the program is compiled");
      const Value t = s_.to_tensor(leaf, std::nullopt, args.span);
      const StaticTensor& st = *t.as<StaticTensorPtr>();
      for (const ir::Variable& other : s_.module().variables)
        if (other.name == path) s_.fail(args.span, "variable '" + path + "' is declared twice");
      ir::Variable var;
      var.name = path;
      var.type.dtype = st.dtype;
      for (int64_t d : st.shape) var.type.shape.push_back(ir::Dim(d));
      StaticTensor dense = st;
      if (dense.splat) {
        dense.bytes = st.dense_bytes();
        dense.splat = false;
      }
      var.constant = s_.add_constant(dense);
      vars->leaves[path] = int32_t(s_.module().variables.size());
      s_.module().variables.push_back(std::move(var));
    }
    vars->attrs.emplace_back(name, std::make_shared<Value>(value));
  }
  return Value(vars);
}

Value ProgramVariables::start(int32_t var, SourceSpan span) {
  auto it = params_.find(var);
  if (it == params_.end()) {
    ir::Function& entry = s_.module().functions[size_t(entry_builder_->fn)];
    const ir::Variable& v = s_.module().variables[size_t(var)];
    const int32_t id = entry.add_value(v.type, v.name, span);
    entry.params.push_back(id);
    it = params_.emplace(var, id).first;
  }
  return Value(Staged{entry_builder_->fn, it->second, std::nullopt});
}

bool ProgramVariables::in_entry_run() const {
  for (const FnBuilder* b = s_.builder(); b != nullptr; b = b->parent)
    if (b == entry_builder_) return true;
  return false;
}

Value ProgramVariables::attribute(const VariablesPtr& vars, const std::string& name, SourceSpan span) {
  const Value* initial = nullptr;
  for (const auto& [n, v] : vars->attrs)
    if (n == name) initial = v.get();
  if (initial == nullptr) s_.fail(span, "the variables have no attribute '" + name + "'");
  if (entry_builder_ == nullptr) return *initial;  // at module level: the initial values
  // Every read sees the value at the start of the run, whatever the run assigned
  // since (SPEC §12): the assignments take effect together when it succeeds.
  return map_leaves(*initial, name,
                    [&](const std::string& path) { return start(vars->leaves.at(path), span); });
}

void ProgramVariables::assign(const VariablesPtr& vars, const std::string& name, const Value& v, SourceSpan span) {
  if (entry_builder_ == nullptr) s_.fail(span, "variables are assigned in an entry (the initial values are given to sg.variables)");
  if (assign_barred_ > 0)
    s_.fail(span, "variable '" + name + "' is assigned inside a function that sg.grad or another transform stages; "
                                        "return the new value and assign it outside");
  if (!in_entry_run())
    s_.fail(span, "variable '" + name + "' is assigned inside a staged call (a recursive function, or an @sg.function "
                                        "called from the entry); return the new value and assign it in the caller");
  const Value* initial = nullptr;
  for (const auto& [n, init] : vars->attrs)
    if (n == name) initial = init.get();
  if (initial == nullptr) s_.fail(span, "the variables have no attribute '" + name + "'; declare it in sg.variables(...)");
  std::vector<Leaf> want, got;
  leaves_of(*initial, name, want);
  leaves_of(v, name, got);
  if (want.size() != got.size())
    s_.fail(span, "variable '" + name + "' holds " + std::to_string(want.size()) + " tensors; the value assigned has " +
                      std::to_string(got.size()) + ": give it the same structure");
  for (size_t k = 0; k < want.size(); ++k) {
    if (want[k].first != got[k].first)
      s_.fail(span, "variable '" + want[k].first + "' is assigned a structure with '" + got[k].first + "' in its place");
    const int32_t var = vars->leaves.at(want[k].first);
    const ir::Type& type = s_.module().variables[size_t(var)].type;
    // A tensor of another kind (an f32 loss into an i64 counter) is a mistake, not a cast.
    if (got[k].second.is_tensor()) {
      const DType dt = s_.tensor_dtype(got[k].second);
      if (is_float(dt) != is_float(type.dtype) || is_int(dt) != is_int(type.dtype))
        s_.fail(span, "variable '" + want[k].first + "' is " + s_.module().format_type(type) + "; the value assigned is " +
                          s_.module().format_type(s_.tensor_type(got[k].second)) + ": cast it with astype");
    }
    Value t = s_.to_tensor(got[k].second, type.dtype, span);
    if (s_.tensor_dtype(t) != type.dtype) t = s_.cast(t, type.dtype, span);
    const ir::Type given = s_.tensor_type(t);
    if (!(given.shape == type.shape))
      s_.fail(span, "variable '" + want[k].first + "' is " + s_.module().format_type(type) + "; the value assigned is " +
                        s_.module().format_type(given));
    current_[var] = t;
  }
}

void ProgramVariables::finish_entry(ir::Entry& entry, SourceSpan span) {
  // The params were added in the order of the first reads; the entry lists them so.
  std::vector<std::pair<int32_t, int32_t>> by_param;
  for (const auto& [var, param] : params_) by_param.emplace_back(param, var);
  std::sort(by_param.begin(), by_param.end());
  entry.reads.clear();
  for (const auto& [param, var] : by_param) entry.reads.push_back(var);
  for (const auto& [var, value] : current_) {
    s_.fn().results.push_back(s_.materialize(value, span));
    entry.writes.push_back(var);
  }
  entry_builder_ = nullptr;
}

void ProgramVariables::begin_entry(FnBuilder& builder) {
  entry_builder_ = &builder;
  params_.clear();
  current_.clear();
}

std::string ProgramVariables::carry_name(int32_t var) const {
  return "$var." + s_.module().variables[size_t(var)].name;
}

void ProgramVariables::forget_params(const FnBuilder* b, size_t values) {
  if (b == entry_builder_) std::erase_if(params_, [&](const auto& kv) { return size_t(kv.second) >= values; });
}

}  // namespace sg::compiler::staging
