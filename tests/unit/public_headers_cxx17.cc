// Compiled with -std=c++17 (tests/CMakeLists.txt): every public header of the
// runtime must build for an application still on C++17. Building this object is
// the test; the functions below make the headers' templates instantiate.
#include "stagegraph/c_api.h"
#include "stagegraph/dtype.h"
#include "stagegraph/export.h"
#include "stagegraph/runtime.h"
#include "stagegraph/span.h"
#include "stagegraph/status.h"
#include "stagegraph/tensor.h"

#include <array>
#include <vector>

static_assert(__cplusplus == 201703L, "this file is the C++17 check");

namespace {

[[maybe_unused]] sg::Result<sg::Tensor> shapes_from_containers() {
  const std::vector<int64_t> v = {2, 3};
  const std::array<int64_t, 2> a = {4, 5};
  SG_ASSIGN_OR_RETURN(sg::Tensor t, sg::Tensor::empty(sg::DType::kF32, v));
  SG_ASSIGN_OR_RETURN(t, sg::Tensor::zeros(sg::DType::kI32, a));
  const sg::Span<const int64_t> dims = t.shape();
  const std::array<int64_t, 2> same = {dims[0], dims.size() > 1 ? dims[1] : 1};
  return sg::Tensor::empty(sg::DType::kF32, same);
}

[[maybe_unused]] sg::Status options_compile() {
  sg::SessionOptions o;
  o.memory_limit_bytes = 1 << 20;
  o.run_timeout = std::chrono::milliseconds(5);
  o.text_callback = [](sg::TextKind, std::string_view) {};
  const uint8_t bytes[4] = {};
  auto program = sg::Program::load_memory(sg::Span<const uint8_t>(bytes, sizeof bytes));
  return program.ok() ? sg::Status() : program.status();
}

}  // namespace
