// Tensor lists (SPEC §5): a list appended to inside a staged loop is carried as
// one tensor whose leading dim (a fresh symbolic dim) counts the items; append
// is concatenate(list, expand_dims(v, 0)). Growth is a copy per append in the
// graph; amortized growth belongs to the runtime.
#include "staging/sg_ops_internal.h"
#include "staging/staged_loop.h"

namespace sg::compiler::staging {
namespace {

// A staged scalar holding `dim` in the current function: a static int, or the
// size of an axis of an entry parameter declared with that symbol.
std::optional<Value> input_dim(Stager& st, const ir::Dim& dim, SourceSpan span) {
  if (auto d = dim.as_static()) return Value(*d);
  FnBuilder* root = st.builder();
  while (root->parent) root = root->parent;
  const ir::Function& f = st.module().functions[size_t(root->fn)];
  for (int32_t p : f.params) {
    const ir::Type& t = f.values[size_t(p)].type;
    for (size_t a = 0; a < t.rank(); ++a)
      if (t.shape[a] == dim) return st.shape_item(Value(Staged{root->fn, p, {}}), int64_t(a), span);
  }
  return std::nullopt;
}

bool is_open(const std::set<int32_t>& open_dims, const ir::Dim& d) {
  const std::optional<int32_t> sym = d.as_symbol();
  return sym && open_dims.count(*sym);
}

}  // namespace

Staged Stager::resolve_tensor_list(const TensorListV& list, const std::string& name, SourceSpan span) {
  if (list.tensor) return *list.tensor;
  TensorListSlot& slot = *list.slot;
  if (slot.param < 0) {
    if (!slot.type)
      fail(span, "list '" + (slot.name.empty() ? name : slot.name) + "' is read inside a staged loop before anything is appended to it, so the type "
                 "of its items is not known; append to it first, or start it with an item before the loop");
    slot.param = module_->functions[size_t(slot.body->fn)].add_value(*slot.type, name, span);
  }
  return Staged{slot.body->fn, slot.param, {}};
}

Value empty_list_tensor(Stager& st, const ir::Type& type, const std::string& name, SourceSpan span,
                        const std::set<int32_t>& open_dims) {
  std::vector<Value> dims{Value(int64_t(0))};
  for (size_t a = 1; a < type.rank(); ++a) {
    if (is_open(open_dims, type.shape[a])) {
      dims.push_back(Value(int64_t(0)));
      continue;
    }
    std::optional<Value> d = input_dim(st, type.shape[a], span);
    if (!d)
      st.fail(span, "the items of list '" + name + "' have the dim " + st.module().format_dim(type.shape[a]) +
                        ", which is not a dim of an input; start the list with a first item before the loop");
    dims.push_back(*d);
  }
  Args args;
  args.pos = {make_tuple(std::move(dims))};
  args.kw.emplace_back("dtype", Value(DTypeV{type.dtype}));
  args.span = span;
  return st.call_sg("zeros", args);
}

Value tensor_list_append(Stager& st, const TensorListV& list, const std::string& name, const Value& v,
                         SourceSpan span) {
  if (!v.is_tensor() && !v.is_number())
    st.fail(span, "list '" + name + "' is a tensor list (appended to in a staged loop); its items must be tensors "
                  "or numbers, got " + type_name(v));
  Value item = st.to_tensor(v, std::nullopt, span);
  const ir::Type it = st.tensor_type(item);
  if (!list.tensor && list.slot && !list.slot->type) {
    ir::Type t{it.dtype, {ir::Dim::symbol(st.module().symbols.fresh(name))}};
    for (const ir::Dim& d : it.shape) {
      // A dim the loop makes (the length of an inner list) gets a symbol of the list's.
      const bool inner = !d.as_static() && st.control().staged_loops > 0 && !input_dim(st, d, span);
      t.shape.push_back(inner ? ir::Dim::symbol(st.module().symbols.fresh(name + "_item")) : d);
      if (inner) list.slot->open_dims.insert(*t.shape.back().as_symbol());
    }
    list.slot->type = t;
  }
  Value base = Value(st.resolve_tensor_list(list, name, span));
  const ir::Type bt = st.tensor_type(base);
  const std::set<int32_t> no_open;
  const std::set<int32_t>& open = list.slot ? list.slot->open_dims : no_open;
  bool same = bt.dtype == it.dtype && bt.rank() == it.rank() + 1, reshape = false;
  for (size_t a = 0; same && a < it.rank(); ++a) {
    reshape = reshape || (is_open(open, bt.shape[a + 1]) && !(bt.shape[a + 1] == it.shape[a]));
    same = bt.shape[a + 1] == it.shape[a] || is_open(open, bt.shape[a + 1]);
  }
  if (!same) {
    ir::Type elem{bt.dtype, {}};
    if (bt.rank() > 0) elem.shape.assign(bt.shape.begin() + 1, bt.shape.end());
    st.fail(span, "list '" + name + "' holds items of type " + st.module().format_type(elem) + "; appending " +
                      st.module().format_type(it) + " would change it (a tensor list's items share one type)",
            st.provenance_notes({v}));
  }
  if (reshape) {  // [L, 0...] before the first append, then [L, the items' dims]
    std::vector<Value> dims{st.shape_item(base, 0, span)};
    for (size_t a = 0; a < it.rank(); ++a) dims.push_back(st.shape_item(item, int64_t(a), span));
    Args args;
    args.pos = {base, make_tuple(std::move(dims))};
    args.span = span;
    base = st.call_sg("reshape", args);
  }
  ops::Attrs expand;
  expand.values = {ops::AttrValue::Ints({0})};
  Value row = st.apply(ops::OpId::ExpandDims, std::move(expand), {item}, span);
  ops::Attrs cat;
  cat.values = {ops::AttrValue::Int(0)};
  Value grown = st.apply(ops::OpId::Concatenate, std::move(cat), {base, row}, span);
  return Value(TensorListV{list.slot, grown.as<Staged>()});
}

}  // namespace sg::compiler::staging

namespace sg::compiler::staging {

Value Stager::tensor_list_join(const TensorListV& list, const std::string& op, const Value& axis, SourceSpan span) {
  Value t = Value(resolve_tensor_list(list, "list", span));
  // An empty list stacks to an empty tensor, in eager mode too (_shape.stack).
  if (op != "stack")
    warn_zero_trip_read(*this, tensor_type(t).shape.at(0), "sg." + op + " of",
                        "sg." + op + " of an empty list fails in eager mode", span);
  // t is [L, items...]: stacking on `axis` moves L there; concatenating on it then
  // merges L into the items' dim there.
  const size_t item_rank = tensor_type(t).rank() - 1;
  if (op == "concatenate" && item_rank == 0) fail(span, "concatenate: the items of the list are 0-d; use sg.stack");
  const int64_t a = normalize_axis(*this, axis, op == "stack" ? item_rank + 1 : item_rank, span);
  if (a != 0) {
    std::vector<Value> perm;
    for (int64_t d = 1; d <= a; ++d) perm.push_back(Value(d));
    perm.push_back(Value(int64_t(0)));
    for (int64_t d = a + 1; d <= int64_t(item_rank); ++d) perm.push_back(Value(d));
    Args args;
    args.pos = {t, make_tuple(std::move(perm))};
    args.span = span;
    t = call_sg("transpose", args);
  }
  if (op == "stack") return t;
  std::vector<Value> dims;
  for (int64_t d = 0; d <= int64_t(item_rank); ++d) {
    if (d == a + 1) continue;
    dims.push_back(d == a ? Value(int64_t(-1)) : shape_item(t, d, span));
  }
  Args args;
  args.pos = {t, make_tuple(std::move(dims))};
  args.span = span;
  return call_sg("reshape", args);
}

}  // namespace sg::compiler::staging
