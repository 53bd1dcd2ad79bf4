// The weights file behind sg.weight(name): a safetensors file whose header is read
// and checked once; a tensor's bytes are read when a program asks for it.
//
// This is the project's one safetensors reader. It depends on nothing of the runtime,
// so graph-compile can use it without linking the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "stagegraph/dtype.h"
#include "stagegraph/status.h"
#include "staging/value.h"

namespace sg::compiler::staging {

// One tensor's entry in a safetensors header, checked: a supported dtype, at most
// kMaxWeightRank dims, and data offsets that lie inside the data and match the shape.
struct WeightEntry {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // relative to the data section
};

inline constexpr size_t kMaxWeightRank = 8;

// Parses a safetensors header (the JSON text after the 8-byte length) whose data
// section holds `data_size` bytes. Errors are kInvalidInput and name the tensor.
Result<std::map<std::string, WeightEntry>> parse_safetensors_header(std::span<const char> header,
                                                                    uint64_t data_size);

class WeightsFile {
 public:
  Status open(const std::string& path);
  Result<StaticTensorPtr> read(const std::string& name) const;

 private:
  std::string path_;
  uint64_t data_offset_ = 0;
  std::map<std::string, WeightEntry> entries_;
};

}  // namespace sg::compiler::staging
