// Placement on a device (DESIGN.md #16): which op nodes of a Program a Session's
// device runs. Asked once per Session: the device prepares a kernel for each op
// node it covers (device_interface.h) and declines the others, which run on the
// host. If/While/Call always run on the host, in the executor, whatever their
// bodies hold; values cross between host and device where a node's inputs lie on
// the other side (the executor makes and counts those copies).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device_interface.h"
#include "program_impl.h"

namespace sg::runtime {

class DevicePlacement {
 public:
  DevicePlacement(const ProgramImpl& program, DeviceContext& device);
  // The device's kernel for node `node` of function `fn`, or null: it runs on the host.
  DeviceKernel* at(uint32_t fn, uint32_t node) const { return kernels_[fn][node].get(); }
  size_t device_nodes() const { return device_nodes_; }

 private:
  std::vector<std::vector<std::unique_ptr<DeviceKernel>>> kernels_;
  size_t device_nodes_ = 0;
};

}  // namespace sg::runtime
