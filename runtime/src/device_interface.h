// The device interface (DESIGN.md #16, "one interpreter, many devices"), in the
// manner of IREE's HAL: the executor keeps frames, If/While/Call, limits,
// cancellation and profiling, and asks a device only to
//   - place: prepare() a kernel for an op node, or decline it (the node then runs
//     on the host);
//   - hold memory: memory(), an Allocator of device addresses, behind the
//     executor's Tensors (Tensor::empty_on_device);
//   - copy: upload() and download() between host and device memory;
//   - run kernels: launch() a prepared kernel on device buffers, in order;
//   - synchronize().
// A Session is given a device as one value, SessionOptions::device (a
// std::shared_ptr<const sg::Device>: sg::test_device() here, sg::cuda_device(N)
// from the CUDA library); sg::Device is immutable and opens a DeviceContext, the
// device's state for one Session (its buffers, stream, prepared kernels). The
// runtime links no device library: it knows a device only through this header.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "program_impl.h"
#include "interface/kernel.h"
#include "stagegraph/runtime.h"

namespace sg {
namespace runtime {

// A node's kernel on a device, prepared once per Session.
class DeviceKernel {
 public:
  virtual ~DeviceKernel() = default;
  virtual const char* name() const = 0;  // for --profile: "cuda:binary", "test:reference"
};

struct DeviceOpenOptions {
  bool allow_tf32 = false;  // SessionOptions::allow_tf32
};

// One Session's use of a device. Called from the thread running the Session.
class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  // Placement: a kernel for op node `node` with inputs like `inputs`, or null
  // where the device does not run it. Needs no device memory.
  virtual std::unique_ptr<DeviceKernel> prepare(const NodeInfo& node, std::span<const kernels::InputInfo> inputs) = 0;
  // Device buffers: allocate() returns a device address (null when out of memory).
  virtual Allocator* memory() = 0;
  // Copies between host and device memory, in order with the kernels launched;
  // download() returns once the bytes are on the host, reporting a fault of any
  // kernel before it (the executor names the node that waited).
  virtual Status upload(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual Status download(void* host_dst, const void* device_src, size_t bytes) = 0;
  // Runs `kernel` on device buffers (TensorRefs whose data are device addresses).
  virtual Status launch(DeviceKernel& kernel, std::span<const kernels::TensorRef> inputs,
                        std::span<kernels::TensorRef> outputs) = 0;
  // Waits for everything launched; reports a fault found meanwhile.
  virtual Status synchronize() = 0;
  // Device bytes kept for reuse (MemoryReport::cached_bytes).
  virtual size_t cached_bytes() const { return 0; }
};

}  // namespace runtime

// A device a Session may run on (SessionOptions::device); immutable, shared.
class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "test", "cuda:0"
  virtual Result<std::unique_ptr<runtime::DeviceContext>> open(const runtime::DeviceOpenOptions& options) const = 0;
};

}  // namespace sg
