// The reference kernels' messages for broken callers (kernel_util.h), out of line.
#include "kernel_util.h"

namespace sg::kernels {

std::string describe(const TensorRef& t) {
  std::string s = dtype_name(t.dtype);
  s += '[';
  for (int i = 0; i < t.rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + ']';
}

Status operand_mismatch(const char* op, const TensorRef& x, const TensorRef& o) {
  return internal_error(std::string(op) + ": " + describe(x) + " -> " + describe(o));
}

Status arity_error(const char* op, size_t inputs, size_t outputs) {
  return internal_error(std::string(op) + ": wrong number of operands (" + std::to_string(inputs) + " inputs, " +
                        std::to_string(outputs) + " outputs)");
}

Status axis_error(const char* op, const TensorRef& t, int64_t axis) {
  return internal_error(std::string(op) + ": axis " + std::to_string(axis) + " is not normalized for " + describe(t));
}

}  // namespace sg::kernels
