// Device strings (the C API's session options): "cpu", "test" (sg::test_device()),
// "cuda" (device 0) or "cuda:N". SessionOptions::device itself is a value, not a string.
#pragma once

#include <string>
#include <string_view>

#include "stagegraph/status.h"

namespace sg::runtime {

enum class DeviceKind : unsigned char { kCpu = 0, kCuda = 1, kTest = 2 };

struct DeviceSpec {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  std::string str() const;  // "cpu", "test", "cuda:0"
};

// kInvalidArgument naming the string and what is accepted when it is none of
// those ("gpu", "cuda:", "cuda:-1", "cuda:1x", an index past 1023).
Result<DeviceSpec> parse_device(std::string_view text);

}  // namespace sg::runtime
