// Fuzzes the .npy reader: malformed headers, shapes and sizes give errors.
#include <cstddef>
#include <cstdint>
#include <span>

#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tensor = sg::tools::parse_npy(std::span<const uint8_t>(data, size));
  if (tensor.ok()) (void)sg::tools::format_values(*tensor, 8);
  return 0;
}
