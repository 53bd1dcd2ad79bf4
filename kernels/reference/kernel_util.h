// Small helpers shared by the reference kernels: operand checks, messages, and the
// [outer, axis, inner] view of a tensor around one axis.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "interface/kernel.h"

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

}  // namespace sg::kernels
