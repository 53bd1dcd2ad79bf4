// Indexing with a tensor of indices or a boolean mask (SPEC §7), as NumPy does
// where its rules give a simple result:
//   x[idx]        take along that axis (basic indexing of the other axes first);
//   x[mask]       take of flat_nonzero(mask): a length known only at run time;
//   x[idx] = v    scatter (the last of repeated indices wins), v broadcast;
//   x[mask] = v   where(mask, v, x) for a scalar v, else scatter at the mask's
//                 nonzero positions of v (one value per selected element, or
//                 broadcast to them);
// and sg.nonzero, sg.where(cond), sg.flatnonzero, sg.compress. One tensor index
// per subscript; basic items beside it are applied first with a slice (and
// written back with slice_update), which is NumPy's result whenever the integer
// items and the tensor index are adjacent or the tensor index's axis comes first.
#include <algorithm>

#include "staging/arg_binding.h"
#include "staging/indexing.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

Value call(Stager& s, const std::string& name, std::vector<Value> pos, SourceSpan span) {
  Args a;
  a.pos = std::move(pos);
  a.span = span;
  return s.call_sg(name, a);
}

Value axis_op(Stager& s, ops::OpId op, int64_t axis, std::vector<Value> inputs, SourceSpan span) {
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(axis)};
  return s.apply(op, std::move(attrs), std::move(inputs), span);
}

Value flat_nonzero(Stager& s, const Value& x, SourceSpan span) {
  return s.apply(ops::OpId::FlatNonzero, {}, {x}, span);
}

IndexItem full_slice(SourceSpan span) {
  IndexItem it;
  it.kind = IndexItem::kSlice;
  it.span = span;
  return it;
}

bool is_full_slice(const IndexItem& it) {
  return it.kind == IndexItem::kSlice && it.lo.is<NoneV>() && it.hi.is<NoneV>() &&
         (it.step.is<NoneV>() || (it.step.is<int64_t>() && it.step.as<int64_t>() == 1));
}

// A mask's dims against the axes they select: a static mismatch is an error now,
// one only the binding decides is checked when it runs (an Assert).
void check_mask_dims(Stager& s, const Value& y, size_t pos, const Value& mask, SourceSpan span) {
  const ir::Type yt = s.tensor_type(y), mt = s.tensor_type(mask);
  for (size_t i = 0; i < mt.rank(); ++i) {
    const ops::Tri eq = ops::dim_equal(yt.shape[pos + i], mt.shape[i]);
    if (eq == ops::Tri::kYes) continue;
    const std::string what = "boolean index " + s.module().format_type(mt) + " does not match the indexed " +
                             s.module().format_type(yt) + " along axis " + std::to_string(pos + i);
    if (eq == ops::Tri::kNo) s.fail(span, what, s.provenance_notes({y, mask}));
    const Value ok = s.compare(CmpOp::kEq, s.shape_item(y, int64_t(pos + i), span),
                               s.shape_item(mask, int64_t(i), span), span);
    s.assert_at_run_time(ok, what, span);
  }
}

// y with axes [pos, pos + k) merged into one (k > 1), for a mask of rank k.
Value merge_axes(Stager& s, const Value& y, size_t pos, size_t k, SourceSpan span) {
  if (k == 1) return y;
  std::vector<Value> dims;
  const size_t rank = s.tensor_rank(y);
  for (size_t i = 0; i < pos; ++i) dims.push_back(s.shape_item(y, int64_t(i), span));
  dims.push_back(Value(int64_t(-1)));
  for (size_t i = pos + k; i < rank; ++i) dims.push_back(s.shape_item(y, int64_t(i), span));
  return reshape(s, y, make_tuple(std::move(dims)), span);
}

// v as the updates of scatter(y, idx, ., axis): y.shape[:axis] + idx.shape +
// y.shape[axis+1:], broadcast NumPy's way; a number takes y's dtype.
Value updates_for(Stager& s, const Value& y, const Value& idx, size_t axis, const Value& v_in, SourceSpan span) {
  const DType dtype = s.tensor_dtype(y);
  Value v = v_in;
  if (!v.is_tensor() && !v.is_number())
    s.fail(span, "can only assign a tensor or a number to a tensor item, got " + type_name(v));
  if (!v.is_tensor()) {
    if (v.is<double>() && !is_float(dtype))
      s.fail(span, std::string("item assignment: cannot store a float into a ") + dtype_name(dtype) +
                       " tensor; cast with astype");
    v = s.to_tensor(v, dtype, span);
  } else if (s.tensor_dtype(v) != dtype) {
    s.fail(span, std::string("item assignment: cannot store ") + dtype_name(s.tensor_dtype(v)) + " into a " +
                     dtype_name(dtype) + " tensor; cast with astype", s.provenance_notes({y, v}));
  }
  std::vector<Value> dims;
  const size_t rank = s.tensor_rank(y);
  for (size_t i = 0; i < axis; ++i) dims.push_back(s.shape_item(y, int64_t(i), span));
  for (size_t i = 0; i < s.tensor_rank(idx); ++i) dims.push_back(s.shape_item(idx, int64_t(i), span));
  for (size_t i = axis + 1; i < rank; ++i) dims.push_back(s.shape_item(y, int64_t(i), span));
  return call(s, "broadcast_to", {v, make_tuple(std::move(dims))}, span);
}

// y with y[index] = v: a scatter at the indices (or the mask's nonzero positions),
// or for a mask with a scalar, where(mask, v, y).
Value assign_into(Stager& s, const Value& y, const Value& index, bool mask, size_t k, size_t pos,
                  const Value* update, SourceSpan span) {
  Value y2;
  if (mask) {
    check_mask_dims(s, y, pos, index, span);
    const bool scalar = update->is_number() || (update->is_tensor() && s.tensor_rank(*update) == 0);
    if (scalar) {
      const DType dtype = s.tensor_dtype(y);
      Value v = *update;
      if (v.is_tensor() && s.tensor_dtype(v) != dtype)
        s.fail(span, std::string("item assignment: cannot store ") + dtype_name(s.tensor_dtype(v)) + " into a " +
                         dtype_name(dtype) + " tensor; cast with astype", s.provenance_notes({y, v}));
      if (v.is<double>() && !is_float(dtype))
        s.fail(span, std::string("item assignment: cannot store a float into a ") + dtype_name(dtype) +
                         " tensor; cast with astype");
      v = s.to_tensor(v, dtype, span);
      // The mask against y's trailing axes: where(mask[..., None...], v, y).
      Value m = index;
      const size_t trailing = s.tensor_rank(y) - pos - k;
      if (trailing > 0) {
        std::vector<int64_t> axes;
        for (size_t i = 0; i < trailing; ++i) axes.push_back(int64_t(k + i));
        ops::Attrs attrs;
        attrs.values = {ops::AttrValue::Ints(axes)};
        m = s.apply(ops::OpId::ExpandDims, std::move(attrs), {m}, span);
      }
      y2 = s.apply(ops::OpId::Where, {}, {m, v, y}, span);
    } else {
      const Value flat = merge_axes(s, y, pos, k, span);
      const Value idx = flat_nonzero(s, index, span);
      const Value upd = updates_for(s, flat, idx, pos, *update, span);
      const Value written = axis_op(s, ops::OpId::Scatter, int64_t(pos), {flat, idx, upd}, span);
      y2 = k == 1 ? written : reshape(s, written, s.shape_tuple(y, span), span);
    }
  } else {
    const Value upd = updates_for(s, y, index, pos, *update, span);
    y2 = axis_op(s, ops::OpId::Scatter, int64_t(pos), {y, index, upd}, span);
  }
  return y2;
}

}  // namespace

bool is_advanced_item(Stager& s, const IndexItem& it) {
  if (it.kind != IndexItem::kIndex || !it.index.is_tensor()) return false;
  return s.tensor_rank(it.index) >= 1 || s.tensor_dtype(it.index) == DType::kBool;
}

Value advanced_index(Stager& s, const Value& x, std::vector<IndexItem> items, SourceSpan span, const Value* update) {
  const ir::Type type = s.tensor_type(x);
  const size_t rank = type.rank();
  // Where the tensor index is, and what the other items are.
  size_t at = items.size(), n_advanced = 0, consumed = 0, ellipses = 0;
  bool new_axis = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const IndexItem& it = items[i];
    if (is_advanced_item(s, it)) {
      ++n_advanced;
      if (at == items.size()) at = i;
    }
    if (it.kind == IndexItem::kNewAxis) new_axis = true;
    if (it.kind == IndexItem::kEllipsis) ++ellipses;
  }
  const IndexItem adv = items[at];
  const bool mask = s.tensor_dtype(adv.index) == DType::kBool;
  const size_t k = mask ? s.tensor_rank(adv.index) : 1;  // the axes it selects
  if (mask && k == 0)
    s.fail(adv.span, "a boolean scalar index is not supported; select with sg.where(cond, x, y) or an if");
  const std::string tool = mask ? "sg.where(mask) or sg.compress(mask, x, axis)" : "sg.take(x, idx, axis)";
  if (n_advanced > 1)
    s.fail(span, "indexing with more than one tensor index (NumPy broadcasts them together) is not supported; "
                 "index one axis at a time with " + tool);
  if (new_axis)
    s.fail(span, "None (a new axis) beside a tensor index is not supported; add the axis with sg.expand_dims");
  if (!mask && !is_int(s.tensor_dtype(adv.index)))
    s.fail(adv.span, std::string("an index tensor must hold integers or bools, got ") +
                         dtype_name(s.tensor_dtype(adv.index)));
  if (ellipses > 1) s.fail(span, "an index can only have a single ellipsis ('...')");
  for (const IndexItem& it : items)
    if (it.kind == IndexItem::kIndex || it.kind == IndexItem::kSlice) consumed += (&it == &items[at]) ? k : 1;
  if (consumed > rank)
    s.fail(span, "too many indices for a tensor of rank " + std::to_string(rank) + " (" + s.module().format_type(type) +
                     ")", s.provenance_notes({x}));

  // The items with the ellipsis (or the implicit one at the end) expanded.
  std::vector<IndexItem> expanded;
  size_t at_expanded = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == IndexItem::kEllipsis) {
      for (size_t j = consumed; j < rank; ++j) expanded.push_back(full_slice(span));
      continue;
    }
    if (i == at) at_expanded = expanded.size();
    expanded.push_back(items[i]);
  }
  if (ellipses == 0)
    for (size_t j = consumed; j < rank; ++j) expanded.push_back(full_slice(span));
  // The basic items, with the tensor index's axes as full slices; its position
  // among the axes the basic indexing keeps.
  std::vector<IndexItem> basic;
  size_t pos = 0, first_index = expanded.size(), last_index = 0, n_index = 0;
  bool everything_full = true;
  for (size_t i = 0; i < expanded.size(); ++i) {
    const IndexItem& it = expanded[i];
    const bool is_index = it.kind == IndexItem::kIndex;  // an int or the tensor index
    if (is_index) {
      first_index = std::min(first_index, i);
      last_index = i;
      ++n_index;
    }
    if (i == at_expanded) {
      for (size_t j = 0; j < k; ++j) basic.push_back(full_slice(adv.span));
      continue;
    }
    basic.push_back(it);
    if (is_index || !is_full_slice(it)) everything_full = false;
    if (i < at_expanded && !is_index) ++pos;
  }
  // NumPy puts the indexed dims first when the integer items and the tensor
  // index are not adjacent; the slice-first lowering gives that only when the
  // index's axis comes first anyway.
  const bool separated = last_index - first_index + 1 != n_index;
  if (separated && pos != 0)
    s.fail(span, "integer indices separated from a tensor index by a slice move the indexed axes to the front "
                 "(NumPy's rule), which is not supported here; index in two steps, or use " + tool);

  const Value y = everything_full ? x : basic_index(s, x, basic, span);
  const Value index = adv.index;
  Value result;
  if (!update) {
    if (mask) {
      check_mask_dims(s, y, pos, index, span);
      result = axis_op(s, ops::OpId::Take, int64_t(pos),
                       {merge_axes(s, y, pos, k, span), flat_nonzero(s, index, span)}, span);
    } else {
      result = axis_op(s, ops::OpId::Take, int64_t(pos), {y, index}, span);
    }
    return result;
  }
  // Item assignment: y with y[index] = v, then written back into x.
  const Value y2 = assign_into(s, y, index, mask, k, pos, update, span);
  if (everything_full) return y2;
  return basic_index(s, x, std::move(basic), span, &y2);
}

// sg.nonzero(x) and sg.where(cond): a tuple of i64 vectors, one per axis, the
// positions of x's nonzero elements in C order; sg.flatnonzero(x): the flat ones.
Value sg_nonzero(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {name == "where" ? "condition" : "x"}, 1);
  const Value x = s.to_tensor(b[0], std::nullopt, a.span);
  const size_t rank = s.tensor_rank(x);
  if (name == "flatnonzero") return flat_nonzero(s, x, a.span);
  if (rank == 0)
    s.fail(a.span, name + ": a 0-d tensor has no axes to give positions along (NumPy refuses it too); "
                          "use sg.flatnonzero(sg.reshape(x, (1,)))");
  const Value flat = flat_nonzero(s, x, a.span);
  std::vector<Value> out(rank);
  Value stride = Value(int64_t(1));
  for (size_t i = rank; i-- > 0;) {
    const Value dim = s.shape_item(x, int64_t(i), a.span);
    Value q = flat;
    if (i + 1 < rank) q = s.binary(BinOp::kFloorDiv, q, stride, a.span);
    out[i] = i == 0 ? q : s.binary(BinOp::kMod, q, dim, a.span);
    stride = s.binary(BinOp::kMul, stride, dim, a.span);
  }
  for (Value& v : out) v = s.cast(v, DType::kI64, a.span);
  return make_tuple(std::move(out));
}

// sg.compress(condition, a, axis=None): a's items along the axis where the 1-d
// condition is nonzero (a condition shorter than the axis selects from its
// start; one longer that selects past the end is a run-time error, as NumPy's).
Value sg_compress(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"condition", "a", "axis"}, 2);
  const Value cond = s.to_tensor(b[0], std::nullopt, a.span);
  if (s.tensor_rank(cond) != 1)
    s.fail(a.span, "compress: the condition must be 1-d, got " + s.module().format_type(s.tensor_type(cond)) +
                       "; select with a boolean index x[mask] or sg.where(mask)");
  Value x = s.to_tensor(b[1], std::nullopt, a.span);
  if (b.none(2)) x = flatten(s, x, a.span);
  const int64_t axis = normalize_axis(s, b.get(2, Value(int64_t(0))), s.tensor_rank(x), a.span);
  return axis_op(s, ops::OpId::Take, axis, {x, flat_nonzero(s, cond, a.span)}, a.span);
}

}  // namespace sg::compiler::staging
