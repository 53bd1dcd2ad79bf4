// Small helpers the executor's source files share: clocks, error messages with a
// node's location, and TensorRefs of tensors and planned values.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "memory_plan.h"
#include "program_impl.h"
#include "interface/kernel.h"

namespace sg::runtime::detail {

inline uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

inline Status at(const NodeInfo& node, StatusCode code, const std::string& message) {
  return Status(code, node.location + ": error: " + message);
}

// A failed allocation for `node`: its location and op, then what could not be had.
inline Status at_alloc(const NodeInfo& node, const Status& failed) {
  return at(node, failed.code(), "'" + node.op_name + "': " + failed.message());
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

// The source function a graph function was made from: graph-compile names the
// second and later specialisations of `f` "f.1", "f.2", ...
inline std::string source_name(const std::string& fn) {
  const size_t dot = fn.find_last_of('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == fn.size()) return fn;
  for (size_t i = dot + 1; i < fn.size(); ++i)
    if (fn[i] < '0' || fn[i] > '9') return fn;
  return fn.substr(0, dot);
}

// Declared dims may be symbolic (-1): shown as "?".
inline std::string type_string(DType dtype, std::span<const int64_t> shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

}  // namespace sg::runtime::detail
