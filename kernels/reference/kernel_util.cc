// The reference kernels' messages for broken callers and window sizes (kernel_util.h),
// out of line.
#include "kernel_util.h"

#include <algorithm>

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

Status make_window(const char* op, const std::string& padding, int64_t in, int64_t out, int64_t k,
                   int64_t stride, int64_t dilation, Window& w) {
  if (k < 1 || stride < 1 || dilation < 1)
    return internal_error(std::string(op) + ": window, stride and dilation must be positive");
  const int64_t span = (k - 1) * dilation + 1;
  int64_t expected;
  if (padding == "SAME") {
    expected = (in + stride - 1) / stride;
  } else if (padding == "VALID") {
    expected = in >= span ? (in - span) / stride + 1 : 0;
  } else {
    return internal_error(std::string(op) + ": unknown padding \"" + padding + "\"");
  }
  if (expected != out)
    return internal_error(std::string(op) + ": output size " + std::to_string(out) +
                          " does not match input size " + std::to_string(in));
  const int64_t total = padding == "SAME" ? std::max<int64_t>((out - 1) * stride + span - in, 0) : 0;
  w = Window{in, out, k, stride, dilation, total / 2};  // the odd one goes after
  return Status::Ok();
}

int64_t attr_pair(const ops::Attrs& attrs, size_t k, int i) {
  const auto& v = attrs.ints(k);
  return v.empty() ? 1 : v[size_t(i) < v.size() ? i : 0];
}

}  // namespace sg::kernels
