// Helpers shared by the runtime tests: loading built graphs and making tensors.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <vector>

#include "graph_builder.h"
#include "node_kernels.h"
#include "stagegraph/runtime.h"

namespace sg::testing {

// Loads through a deliberately misaligned buffer, so the Program always owns a
// copy and the test's bytes may go away.
inline Result<std::shared_ptr<const Program>> load_owned(std::span<const uint8_t> bytes,
                                                         const LoadOptions& options = {}) {
  std::vector<uint8_t> skewed(bytes.size() + 1);
  if (!bytes.empty()) std::memcpy(skewed.data() + 1, bytes.data(), bytes.size());
  return Program::load_memory(std::span<const uint8_t>(skewed).subspan(1), options);
}

inline std::shared_ptr<const Program> load_ok(const GraphSpec& g) {
  const std::vector<uint8_t> bytes = build_sgraph(g);
  auto p = load_owned(bytes);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : nullptr;
}

template <class T>
Tensor make_tensor(DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
  Tensor t = Tensor::empty(dtype, shape).value();
  EXPECT_EQ(size_t(t.numel()), values.size());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
  return t;
}

// Whether this process may run on two CPUs at once. A Session takes no more threads
// than that, so what a test expects of two threads holds only then.
inline bool two_cpus() { return runtime::usable_threads(2) >= 2; }

inline Tensor scalar_i64(int64_t v) { return make_tensor<int64_t>(DType::kI64, {}, {v}); }

template <class T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.numel());
}

// A Session's output (Session::output), which the test expects to be there.
template <class T>
std::vector<T> values_of(const Result<Tensor>& t) {
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? values_of<T>(*t) : std::vector<T>();
}

}  // namespace sg::testing
