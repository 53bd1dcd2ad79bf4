// The weights file behind sg.weight(name): a safetensors file whose header is
// read once; tensors are read when a program asks for them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stagegraph/status.h"
#include "staging/value.h"

namespace sg::compiler::staging {

class WeightsFile {
 public:
  Status open(const std::string& path);
  Result<StaticTensorPtr> read(const std::string& name) const;

 private:
  struct Entry {
    std::string dtype_name;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;
  };
  std::string path_;
  uint64_t data_offset_ = 0;
  std::map<std::string, Entry> entries_;
};

}  // namespace sg::compiler::staging
