// Placement (DESIGN.md #12): which device runs each node of a Program when a
// Session has a GPU, and the copies between host and device memory that follow.
// Device-independent: the caller says which op nodes the GPU covers (the CUDA
// backend's prepare() in a GPU build, any predicate in tests).
//
// The rules:
//   - An op node the GPU covers runs there; any other op node (print, assert,
//     sort, f16...) runs on the CPU. A node whose output shape depends on the
//     values of scalar inputs (reshape to a run-time dim, a staged slice bound)
//     also needs those scalars on the host, where shapes are inferred.
//   - A function is a *device function* when every node in it runs on the GPU,
//     transitively through the If/While bodies it holds, and it makes no Call:
//     an If or While over device functions runs on the device as a CUDA graph
//     conditional node (no host round trip per iteration), its operands and
//     results in device memory.
//   - Any other If/While/Call is *host-driven*: its callee functions take their
//     parameters and give their results in host memory, and the host decides
//     each branch or iteration (from a scalar read through pinned memory).
//     Call nodes, recursion included, are always host-driven (the frame stack).
//   - A value is copied at most once to each device where it is read; a
//     function's results end where its kind says (host for host-driven ones).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "program_impl.h"

namespace sg::runtime {

enum class Device : uint8_t { kCpu = 0, kGpu = 1 };
const char* device_name(Device d);

struct Transfer {
  uint32_t value = 0;
  Device to = Device::kCpu;
};

struct NodePlacement {
  Device device = Device::kCpu;
  std::vector<Transfer> before;  // copies of its inputs, made before it runs
  // If/While: runs as a device-side conditional; else host-driven, and `reason`
  // names the first node that keeps it on the host.
  bool device_control = false;
  std::string reason;
};

struct FunctionPlacement {
  bool device_function = false;
  std::string reason;  // why not, naming a node: "node 3 (sort) has no GPU kernel"
  std::vector<NodePlacement> nodes;
  std::vector<Transfer> results;  // copies of results, made after the last node
  size_t transfers = 0;           // all copies this function makes per run
};

struct ProgramPlacement {
  std::vector<FunctionPlacement> functions;
};

using CoversFn = std::function<bool(const FunctionImpl&, const NodeInfo&)>;

ProgramPlacement place(const ProgramImpl& program, const CoversFn& gpu_covers);

}  // namespace sg::runtime
