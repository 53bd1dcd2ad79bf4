// Reading and writing a Session's variables as safetensors (safetensors.cc).
#pragma once

#include <string>
#include <vector>

#include "stagegraph/status.h"
#include "stagegraph/tensor.h"

namespace sg::runtime {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Atomic: a temporary file beside `path`, flushed, then renamed over it.
Status write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors);
// Every tensor of the file, in host memory from `allocator`. kNotFound for a missing
// file, kInvalidArgument naming what is wrong with a malformed one.
Result<std::vector<NamedTensor>> read_safetensors(const std::string& path, Allocator* allocator);

}  // namespace sg::runtime
