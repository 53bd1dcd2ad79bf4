// How a Session reaches a device's executor without the runtime linking that
// device's libraries (DESIGN.md #12, "devices are placements"): the caller passes
// a DeviceBackend in SessionOptions::device_backend (for CUDA, sg::cuda_backend()
// from the sg_runtime_cuda library, stagegraph/cuda.h), an immutable object with
// no state of its own. Session::create parses SessionOptions::device and, for a
// device other than the CPU, asks the backend of that kind to open a DeviceRunner
// for the entry; the Session then runs on it instead of the host executor.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "device.h"
#include "node_kernels.h"
#include "program_impl.h"
#include "stagegraph/runtime.h"

namespace sg {
namespace runtime {

// Per node of a function, what a device run did (Session::profile).
struct DeviceNodeStats {
  uint64_t calls = 0;
  uint64_t total_ns = 0;
};

// A Session's executor on a device: its memory, stream and prepared kernels.
class DeviceRunner {
 public:
  virtual ~DeviceRunner() = default;
  // Runs the entry with host `args` (shared, not modified); on success `results`
  // holds its results in host memory.
  virtual Status run(std::span<Tensor> args, std::vector<Tensor>& results) = 0;
  // Profiles of the nodes that ran, with the kernel and device of each, plus one
  // row per function for the copies between host and device ("transfer").
  virtual std::vector<NodeProfile> profile() const = 0;
  virtual MemoryReport memory_report() const = 0;
  virtual void request_cancel() = 0;
  virtual void clear_cancel() = 0;
};

// What a backend is given to open a runner.
struct DeviceOpen {
  const ProgramImpl* program = nullptr;
  uint32_t entry_function = 0;
  DeviceSpec device;
  const SessionOptions* options = nullptr;
  const NodeKernels* host_kernels = nullptr;  // the CPU kernels, for nodes the device lacks
  Allocator* allocator = nullptr;             // host memory (results, CPU-side values)
};

}  // namespace runtime

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual runtime::DeviceKind kind() const = 0;
  // kUnsupported "no CUDA device: ..." without one; the device's errors as Status.
  virtual Result<std::unique_ptr<runtime::DeviceRunner>> open(const runtime::DeviceOpen& request) const = 0;
};

}  // namespace sg
