// Basic indexing and slicing of tensors (SPEC §7): x[i], x[a:b:s], x[:, 1],
// x[..., None], negative indices and staged scalar indices, lowered to one
// `slice` node (plus `expand_dims` for None).
#include <algorithm>

#include "staging/control_state.h"
#include "staging/indexing.h"

namespace sg::compiler::staging {

// x[items], or with `update` x with x[items] = *update (one slice_update node).
// `from_source`: an index written in the program, which is checked for reads
// of what a loop may have left empty (a loop's own iteration is not).
static Value index_items(Stager& s, const Value& x, std::vector<IndexItem> items, SourceSpan span,
                         const Value* update = nullptr, bool from_source = false) {
  for (const IndexItem& it : items)
    if (is_advanced_item(s, it)) return advanced_index(s, x, std::move(items), span, update);
  return basic_index(s, x, std::move(items), span, update, from_source);
}

Value basic_index(Stager& s, const Value& x, std::vector<IndexItem> items, SourceSpan span, const Value* update,
                  bool from_source) {
  const ir::Type type = s.tensor_type(x);
  const size_t rank = type.rank();
  size_t consumed = 0, ellipses = 0;
  for (const IndexItem& it : items) {
    if (it.kind == IndexItem::kIndex || it.kind == IndexItem::kSlice) ++consumed;
    if (it.kind == IndexItem::kEllipsis) ++ellipses;
  }
  if (ellipses > 1) s.fail(span, "an index can only have a single ellipsis ('...')");
  if (consumed > rank)
    s.fail(span, "too many indices for a tensor of rank " + std::to_string(rank) + " (" +
                     s.module().format_type(type) + ")", s.provenance_notes({x}));
  // Expand the ellipsis (or the implicit one at the end) into full slices.
  std::vector<IndexItem> expanded;
  auto full_slices = [&](size_t n) {
    for (size_t i = 0; i < n; ++i) expanded.push_back(IndexItem{IndexItem::kSlice, {}, {}, {}, {}, span});
  };
  for (IndexItem& it : items) {
    if (it.kind == IndexItem::kEllipsis) full_slices(rank - consumed);
    else expanded.push_back(std::move(it));
  }
  if (ellipses == 0) full_slices(rank - consumed);

  std::vector<int64_t> begin(rank, 0), end(rank, 0), step(rank, 1), flags(rank, 0);
  std::vector<Value> inputs{x};
  std::vector<int64_t> expand_axes;
  size_t axis = 0;
  int64_t out_axis = 0;
  bool sliced = false;
  auto bound = [&](const Value& v, SourceSpan where, int64_t& slot, int64_t has_flag, int64_t dyn_flag) {
    if (v.is<NoneV>()) return;
    if (v.is<Staged>()) {
      if (s.tensor_rank(v) != 0 || !is_int(s.tensor_dtype(v)))
        s.fail(where, "a slice bound must be an integer scalar, got a " + s.module().format_type(s.tensor_type(v)) + " tensor");
      flags[axis] |= dyn_flag;  // a bound is either static or dynamic
      inputs.push_back(v);
    } else {
      slot = s.to_int(v, where, "a slice bound");
      flags[axis] |= has_flag;
    }
    sliced = true;
  };
  for (const IndexItem& it : expanded) {
    if (it.kind == IndexItem::kNewAxis) {
      expand_axes.push_back(out_axis++);
      continue;
    }
    if (it.kind == IndexItem::kIndex) {
      const Value& v = it.index;
      if (v.is<bool>()) s.fail(it.span, "boolean indices are not supported; use sg.where");
      if (from_source && !update)
        warn_zero_trip_read(s, type.shape[axis], "indexing", "this index is then out of range (in eager mode too)",
                            span);
      if (v.is<Staged>() || (v.is<StaticTensorPtr>() && s.tensor_rank(v) == 0)) {
        const DType dt = s.tensor_dtype(v);
        if (s.tensor_rank(v) != 0) s.fail(it.span, "indexing with a tensor of indices: use sg.take(x, idx, axis)");
        if (!is_int(dt)) s.fail(it.span, std::string("an index must be an integer, got a ") + dtype_name(dt) + " tensor");
      }
      if (v.is<Staged>()) {
        flags[axis] = ops::attr::kIndex | ops::attr::kDynBegin;
        inputs.push_back(v);
      } else {
        if (v.is_tensor() && s.tensor_rank(v) != 0)
          s.fail(it.span, "indexing with a tensor of indices: use sg.take(x, idx, axis)");
        const int64_t i = s.to_int(v, it.span, "an index");
        if (auto n = type.shape[axis].as_static(); n && (i < -*n || i >= *n))
          s.fail(it.span, "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                              " with size " + std::to_string(*n), s.provenance_notes({x}));
        begin[axis] = i;
        flags[axis] = ops::attr::kIndex;
      }
      sliced = true;
      ++axis;
      continue;
    }
    // A slice.
    if (!it.step.is<NoneV>()) {
      if (it.step.is<Staged>()) s.fail(it.span, "a slice step must be known at compile time");
      step[axis] = s.to_int(it.step, it.span, "a slice step");
      if (step[axis] == 0) s.fail(it.span, "slice step cannot be zero");
      sliced = sliced || step[axis] != 1;
    }
    bound(it.lo, it.span, begin[axis], ops::attr::kHasBegin, ops::attr::kDynBegin);
    bound(it.hi, it.span, end[axis], ops::attr::kHasEnd, ops::attr::kDynEnd);
    ++axis;
    ++out_axis;
  }
  if (update) {
    if (!expand_axes.empty()) s.fail(span, "None (a new axis) in the index of an item assignment is not supported");
    Value v = *update;
    if (!v.is_tensor() && !v.is_number())
      s.fail(span, "can only assign a tensor or a number to a tensor item, got " + type_name(v));
    if (!v.is_tensor()) {  // SPEC §3: a number takes x's dtype, unless that would lose its kind
      DType d = type.dtype;
      if (v.is<double>() && !is_float(d)) d = DType::kF32;
      if (v.is<int64_t>() && d == DType::kBool) d = DType::kI64;
      v = s.to_tensor(v, d, span);
    }
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(begin), ops::AttrValue::Ints(end), ops::AttrValue::Ints(step),
                    ops::AttrValue::Ints(flags)};
    inputs.insert(inputs.begin() + 1, v);
    return s.apply(ops::OpId::SliceUpdate, std::move(attrs), std::move(inputs), span);
  }
  Value result = x;
  if (sliced) {
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(begin), ops::AttrValue::Ints(end), ops::AttrValue::Ints(step),
                    ops::AttrValue::Ints(flags)};
    result = s.apply(ops::OpId::Slice, std::move(attrs), std::move(inputs), span);
  }
  if (!expand_axes.empty()) {
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(expand_axes)};
    result = s.apply(ops::OpId::ExpandDims, std::move(attrs), {result}, span);
  }
  return result;
}

// A list (or, inside a tuple key, a tuple) of ints or bools indexes as the NumPy
// array it makes: a static i64 tensor of indices, or a bool mask.
static Value list_index(Stager& s, const Value& v, SourceSpan span) {
  if (!v.is<ListPtr>() && !v.is<TuplePtr>()) return v;
  const std::vector<Value> elems = s.to_list(v, span);
  const bool mask = !elems.empty() && std::all_of(elems.begin(), elems.end(), [](const Value& e) { return e.is<bool>(); });
  auto t = std::make_shared<StaticTensor>();
  t->dtype = mask ? DType::kBool : DType::kI64;
  t->shape = {int64_t(elems.size())};
  for (const Value& e : elems) {
    if (mask) {
      t->bytes.push_back(e.as<bool>() ? 1 : 0);
      continue;
    }
    if (e.is<bool>() || !(e.is<int64_t>() || e.is_tensor()))
      s.fail(span, "a list index must hold only ints (indices) or only bools (a mask), got " + type_name(e));
    const int64_t i = s.to_int(e, span, "an index");
    const auto* p = reinterpret_cast<const uint8_t*>(&i);
    t->bytes.insert(t->bytes.end(), p, p + 8);
  }
  return Value(StaticTensorPtr(t));
}

static IndexItem item_from_value(const Value& v, SourceSpan span) {
  IndexItem it;
  it.span = span;
  if (v.is<NoneV>()) it.kind = IndexItem::kNewAxis;
  else if (v.is<EllipsisV>()) it.kind = IndexItem::kEllipsis;
  else it.index = v;
  return it;
}

static std::vector<IndexItem> items_from_expr(Stager& s, const Expr& index) {
  std::vector<const Expr*> parts;
  if (index.kind == ExprKind::kTuple) {
    for (const ExprPtr& e : index.elts) parts.push_back(e.get());
  } else {
    parts.push_back(&index);
  }
  std::vector<IndexItem> items;
  for (const Expr* e : parts) {
    if (e->kind == ExprKind::kSlice) {
      IndexItem it;
      it.kind = IndexItem::kSlice;
      it.span = e->span;
      if (e->a) it.lo = s.eval(*e->a);
      if (e->b) it.hi = s.eval(*e->b);
      if (e->c) it.step = s.eval(*e->c);
      items.push_back(std::move(it));
      continue;
    }
    Value v = s.eval(*e);
    if (v.is<TuplePtr>() && parts.size() == 1) {  // x[idx] with idx a tuple value
      for (const Value& p : *v.as<TuplePtr>()) items.push_back(item_from_value(p, e->span));
      continue;
    }
    items.push_back(item_from_value(list_index(s, v, e->span), e->span));
  }
  return items;
}

Value Stager::index_tensor(const Value& x, const Expr& index, SourceSpan span) {
  return index_items(*this, x, items_from_expr(*this, index), span, nullptr, true);
}

Value Stager::index_update(const Value& x, const Expr& index, const Value& v, SourceSpan span) {
  return index_items(*this, x, items_from_expr(*this, index), span, &v);
}

Value Stager::index_tensor_value(const Value& x, const Value& index, SourceSpan span) {
  std::vector<IndexItem> items;
  if (index.is<TuplePtr>()) {
    for (const Value& p : *index.as<TuplePtr>()) items.push_back(item_from_value(list_index(*this, p, span), span));
  } else {
    items.push_back(item_from_value(list_index(*this, index, span), span));
  }
  return index_items(*this, x, std::move(items), span);
}

}  // namespace sg::compiler::staging
