// Helpers shared by the op library's handlers (sg_<family>.cc), its dispatch
// (sg_dispatch.cc) and tensor methods (methods.cc), implemented in sg_ops.cc;
// and the handlers themselves.
#pragma once

#include <string>
#include <vector>

#include "staging/stager.h"

namespace sg::compiler::staging {

// A non-negative axis for a tensor of `rank`; out of range is an error.
int64_t normalize_axis(Stager& s, const Value& v, size_t rank, SourceSpan span);
// None: every axis; an int or a tuple: sorted, unique, non-negative.
std::vector<int64_t> normalize_axes(Stager& s, const Value& v, size_t rank, SourceSpan span);
DType dtype_arg(Stager& s, const Value& v, SourceSpan span);
// A non-negative int from a static value; `what` names it in errors.
int64_t non_negative(Stager& s, const Value& v, SourceSpan span, const std::string& what);

Value reduce(Stager& s, ops::OpId op, const Value& x, const Value& axis, bool keepdims, SourceSpan span);
// full(shape, fill): a splat when everything is static, else a `full` node.
Value make_full(Stager& s, const ShapeArg& shape, const Value& fill, SourceSpan span);
Value reshape(Stager& s, const Value& x, const Value& shape, SourceSpan span);
// x as one dim (NumPy's axis=None for take, argmax, sort, concatenate...).
Value flatten(Stager& s, const Value& x, SourceSpan span);
Value transpose(Stager& s, const Value& x, const Value& axes, SourceSpan span);
Value astype(Stager& s, const Value& x, const Value& dtype, SourceSpan span);
std::vector<Value> unify_dtypes(Stager& s, std::vector<Value> vals, const std::string& op, SourceSpan span);
// sg.NAME(*pos) from a handler that lowers onto other ops (sg_ordering.cc,
// sg_ops_everyday.cc).
inline Value sg_call(Stager& s, const char* name, std::vector<Value> pos, SourceSpan span) {
  Args a;
  a.pos = std::move(pos);
  a.span = span;
  return s.call_sg(name, a);
}
// v as a tensor (a Python number in its default dtype).
inline Value tensor_of(Stager& s, const Value& v, SourceSpan span) {
  return v.is_tensor() ? v : s.to_tensor(v, std::nullopt, span);
}

// The sg.NAME handlers of the op families (kernels/ops/op_families.h), each in
// sg_<family>.cc, which sg_dispatch.cc's table names.
// sg_elementwise.cc: the unary and binary ops by NumPy's names, where, clip, astype.
Value sg_unary(Stager& s, const Args& a, const std::string& name);
Value sg_binary(Stager& s, const Args& a, const std::string& name);
Value sg_where(Stager& s, const Args& a, const std::string& name);
Value sg_clip(Stager& s, const Args& a, const std::string& name);
Value sg_astype(Stager& s, const Args& a, const std::string& name);
// sg_reduction.cc: sum ... argmin, amax, amin.
Value sg_reduction(Stager& s, const Args& a, const std::string& name);
// sg_ordering.cc: cumsum/sort/argsort, topk (a (values, indices) tuple), cumprod,
// searchsorted.
Value sg_ordering(Stager& s, const Args& a, const std::string& name);
Value sg_topk(Stager& s, const Args& a, const std::string& name);
Value sg_cumprod(Stager& s, const Args& a, const std::string& name);
Value sg_searchsorted(Stager& s, const Args& a, const std::string& name);
// sg_shape.cc: reshape, transpose, expand_dims/squeeze, concatenate/stack,
// broadcast_to, tile, pad, split (a list of parts).
Value sg_reshape(Stager& s, const Args& a, const std::string& name);
Value sg_transpose(Stager& s, const Args& a, const std::string& name);
Value sg_expand_squeeze(Stager& s, const Args& a, const std::string& name);
Value sg_concat_stack(Stager& s, const Args& a, const std::string& name);
Value sg_broadcast_to(Stager& s, const Args& a, const std::string& name);
Value sg_tile(Stager& s, const Args& a, const std::string& name);
Value sg_pad(Stager& s, const Args& a, const std::string& name);
Value sg_split(Stager& s, const Args& a, const std::string& name);
// sg_indexing.cc: take.
Value sg_take(Stager& s, const Args& a, const std::string& name);
// sg_creation.cc: zeros, ones, full (and _like), arange, eye, one_hot.
Value sg_creation(Stager& s, const Args& a, const std::string& name);
Value sg_arange(Stager& s, const Args& a, const std::string& name);
Value sg_eye(Stager& s, const Args& a, const std::string& name);
Value sg_one_hot(Stager& s, const Args& a, const std::string& name);
// sg_nn.cc: softmax/log_softmax, layer_norm, conv2d, max_pool2d/avg_pool2d.
Value sg_softmax(Stager& s, const Args& a, const std::string& name);
Value sg_layer_norm(Stager& s, const Args& a, const std::string& name);
Value sg_conv2d(Stager& s, const Args& a, const std::string& name);
Value sg_pool2d(Stager& s, const Args& a, const std::string& name);
// sg_linalg.cc: matmul and dot.
Value sg_matmul(Stager& s, const Args& a, const std::string& name);

// sg.random and its functions ("random.key", "random.uniform", ...), sg_random.cc.
Value sg_random(Stager& s, const Args& a, const std::string& name);
// sg.custom_op(name, fn=, result=) and calls of what it returns (sg_custom.cc).
Value sg_custom_op(Stager& s, const Args& a, const std::string& name);
bool is_custom_op(const BoundMethod& m);
Value call_custom_op(Stager& s, const BoundMethod& m, Args& a);
// sg.tree_map(fn, tree, *rest): fn over the leaves of same-shaped structures (sg_tree.cc).
Value sg_tree(Stager& s, const Args& a, const std::string& name);
// sg.linalg and its functions ("linalg.inv", ...), sg_linalg.cc; sg.linalg.NAME.
Value sg_linalg(Stager& s, const Args& a, const std::string& name);
Value sg_linalg_attribute(Stager& s, const std::string& name, SourceSpan span);
// sg.MEMBER.NAME: a function of a submodule of the library (sg.random.uniform).
Value sg_member_attribute(Stager& s, const std::string& member, const std::string& name, SourceSpan span);

}  // namespace sg::compiler::staging
