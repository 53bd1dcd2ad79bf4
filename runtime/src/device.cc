#include "device.h"

#include <string>

namespace sg::runtime {

std::string DeviceSpec::str() const {
  if (kind == DeviceKind::kCpu) return "cpu";
  if (kind == DeviceKind::kTest) return "test";
  return "cuda:" + std::to_string(index);
}

Result<DeviceSpec> parse_device(std::string_view text) {
  const auto bad = [&](const std::string& why) -> Result<DeviceSpec> {
    return Status(StatusCode::kInvalidArgument, "invalid device '" + std::string(text) + "': " + why +
                                                    " (expected cpu, test, cuda or cuda:N, N a device index)");
  };
  DeviceSpec spec;
  if (text == "cpu") return spec;
  if (text == "test") {
    spec.kind = DeviceKind::kTest;
    return spec;
  }
  constexpr std::string_view kCuda = "cuda";
  if (text.substr(0, kCuda.size()) != kCuda) return bad("unknown device");
  spec.kind = DeviceKind::kCuda;
  std::string_view rest = text.substr(kCuda.size());
  if (rest.empty()) return spec;
  if (rest[0] != ':') return bad("unknown device");
  rest.remove_prefix(1);
  if (rest.empty()) return bad("no device index after ':'");
  if (rest.size() > 4) return bad("device index out of range (0 to 1023)");
  int index = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return bad("the device index is not a decimal number");
    index = index * 10 + (c - '0');
  }
  if (index > 1023) return bad("device index out of range (0 to 1023)");
  spec.index = index;
  return spec;
}

}  // namespace sg::runtime
