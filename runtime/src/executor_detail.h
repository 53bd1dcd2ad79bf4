// Small helpers the executor's source files share: clocks, error messages with a
// node's location, and TensorRefs of tensors and planned values.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "memory_plan.h"
#include "program_impl.h"
#include "reference/kernel.h"

namespace sg::runtime::detail {

inline uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

inline Status at(const NodeInfo& node, StatusCode code, const std::string& message) {
  return Status(code, node.location + ": error: " + message);
}

inline kernels::TensorRef ref_of(const Tensor& t) {
  kernels::TensorRef r;
  r.dtype = t.dtype();
  r.rank = t.rank();
  for (int i = 0; i < t.rank(); ++i) r.shape[i] = t.dim(i);
  r.data = const_cast<void*>(t.data());
  return r;
}

inline kernels::TensorRef ref_of_planned(DType dtype, const PlannedShape& s, void* data) {
  kernels::TensorRef r;
  r.dtype = dtype;
  r.rank = s.rank;
  for (int i = 0; i < s.rank; ++i) r.shape[i] = s.dims[i];
  r.data = data;
  return r;
}

// Declared dims may be symbolic (-1): shown as "?".
inline std::string type_string(DType dtype, std::span<const int64_t> shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

}  // namespace sg::runtime::detail
