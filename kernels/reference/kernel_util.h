// Small helpers shared by the reference kernels: operand checks, messages, and the
// [outer, axis, inner] view of a tensor around one axis.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "interface/kernel.h"

namespace sg::kernels {

// "f32[2, 3]"
inline std::string describe(const TensorRef& t) {
  std::string s = dtype_name(t.dtype);
  s += '[';
  for (int i = 0; i < t.rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + ']';
}

// The loader and the shape rules guarantee arity; this keeps a broken caller from
// reading out of bounds.
inline Status check_arity(const char* op, std::span<const TensorRef> in, size_t min_in,
                          std::span<TensorRef> out) {
  if (in.size() < min_in || out.size() != 1)
    return internal_error(std::string(op) + ": wrong number of operands (" +
                          std::to_string(in.size()) + " inputs, " + std::to_string(out.size()) +
                          " outputs)");
  return Status::Ok();
}

inline Status check_axis(const char* op, const TensorRef& t, int64_t axis) {
  if (axis < 0 || axis >= t.rank)
    return internal_error(std::string(op) + ": axis " + std::to_string(axis) +
                          " is not normalized for " + describe(t));
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
