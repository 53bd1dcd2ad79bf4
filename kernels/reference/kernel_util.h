// Small helpers shared by the reference kernels: operand checks, messages, and the
// [outer, axis, inner] view of a tensor around one axis.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "interface/kernel.h"
#include "ops/attrs.h"

namespace sg::kernels {

// "f32[2, 3]". The messages below are built out of line, on the failure path
// only (kernel_util.cc): every kernel calls these checks.
std::string describe(const TensorRef& t);

// internal_error("op: " + describe(x) + " -> " + describe(o)): a kernel called
// with an output that does not fit its operand, which the shape rules rule out.
Status operand_mismatch(const char* op, const TensorRef& x, const TensorRef& o);
Status arity_error(const char* op, size_t inputs, size_t outputs);
Status axis_error(const char* op, const TensorRef& t, int64_t axis);

// The loader and the shape rules guarantee arity; this keeps a broken caller from
// reading out of bounds.
inline Status check_arity(const char* op, std::span<const TensorRef> in, size_t min_in,
                          std::span<TensorRef> out) {
  if (in.size() < min_in || out.size() != 1) return arity_error(op, in.size(), out.size());
  return Status::Ok();
}

inline Status check_axis(const char* op, const TensorRef& t, int64_t axis) {
  if (axis < 0 || axis >= t.rank) return axis_error(op, t, axis);
  return Status::Ok();
}

// A tensor seen as [outer, n, inner] around `axis`.
struct AxisView {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

inline AxisView axis_view(const TensorRef& t, int axis) {
  AxisView v;
  for (int d = 0; d < axis; ++d) v.outer *= t.shape[d];
  v.n = t.shape[axis];
  for (int d = axis + 1; d < t.rank; ++d) v.inner *= t.shape[d];
  return v;
}

// Copies `n` elements of `elem` bytes; `n` may be 0 with null pointers.
void copy_elements(void* dst, const void* src, int64_t n, size_t elem);

// One spatial axis of a window (conv2d, pooling): the output size the padding rule
// gives (SPEC §7), and the padding before (SAME puts the odd cell after).
struct Window {
  int64_t in, out, k, stride, dilation, pad_before;
};
// An internal error naming `op` when `out` is not the size "SAME"/"VALID" padding gives.
Status make_window(const char* op, const std::string& padding, int64_t in, int64_t out, int64_t k,
                   int64_t stride, int64_t dilation, Window& w);
// Entry i of the pair attribute k (strides, dilations): 1 when absent, the first
// entry when only one is given.
int64_t attr_pair(const ops::Attrs& attrs, size_t k, int i);

}  // namespace sg::kernels
