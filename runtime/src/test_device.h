// The test device (sg::test_device(), DESIGN.md #16): host memory behind the
// device interface, so that the executor's device path (placement, copies,
// frames whose values live on a device) is exercised on every machine.
//   - Its buffers are its own: allocated apart from the host's, registered while
//     live, poisoned (all bits set: NaN for floats) when freed. launch(), upload()
//     and download() refuse any address that is not a live buffer of this device,
//     so a kernel handed host memory by mistake fails with kInternal.
//   - It runs the reference kernels (the CPU's, single-threaded) on those buffers,
//     and declines custom ops and TestDeviceOptions::host_ops.
//   - It counts what it does (TestDeviceCounts), over every Session opened on it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "device_interface.h"

namespace sg::runtime {

struct TestDeviceCounts {
  std::atomic<uint64_t> uploads{0}, downloads{0};
  std::atomic<uint64_t> upload_bytes{0}, download_bytes{0};
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> allocations{0}, frees{0};
};

class TestDevice final : public Device {
 public:
  explicit TestDevice(TestDeviceOptions options = {})
      : options_(std::move(options)), counts_(std::make_shared<TestDeviceCounts>()) {}
  std::string name() const override { return "test"; }
  Result<std::unique_ptr<DeviceContext>> open(const DeviceOpenOptions& options) const override;
  // What every context opened on this device did; the counters are the device's
  // only state besides its options, shared with the contexts.
  const TestDeviceCounts& counts() const { return *counts_; }

 private:
  TestDeviceOptions options_;
  std::shared_ptr<TestDeviceCounts> counts_;
};

}  // namespace sg::runtime
