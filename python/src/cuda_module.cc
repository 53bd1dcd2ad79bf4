// stagegraph._cuda: the runtime's CUDA device (runtime/cuda, sg::cuda_device) for
// stagegraph._runtime, which links no CUDA library. Built only where the CUDA
// device is (target sg_runtime_cuda); _runtime imports it the first time a session
// asks for device "cuda" or "cuda:N", so a machine without CUDA's libraries only
// fails there (ImportError, reported by _runtime as "no CUDA device: ...").
//
//   _cuda.device(index) -> capsule (device_capsule.h) holding sg::cuda_device(index)
//     RuntimeError "no CUDA device: ..." without a driver or GPU,
//     ValueError naming the GPUs there are for an index past them.
//   _cuda.test_device() -> the same for sg::test_device(), made by this module's copy
//     of the runtime: the hand-over tested where there is no GPU.
#include <nanobind/nanobind.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "device_capsule.h"
#include "stagegraph/cuda.h"
#include "stagegraph/runtime.h"

namespace nb = nanobind;

namespace {

using DevicePtr = std::shared_ptr<const sg::Device>;

nb::capsule capsule_of(DevicePtr device) {
  auto* held = new DevicePtr(std::move(device));
  return nb::capsule(held, SG_DEVICE_CAPSULE_NAME, [](void* p) noexcept { delete static_cast<DevicePtr*>(p); });
}

nb::capsule device(int index) {
  sg::Result<DevicePtr> d = [&] {
    nb::gil_scoped_release release;  // the first CUDA call starts the driver
    return sg::cuda_device(index);
  }();
  if (!d.ok()) {
    if (d.status().code() == sg::StatusCode::kInvalidArgument) throw nb::value_error(d.status().message().c_str());
    throw std::runtime_error(d.status().message());
  }
  return capsule_of(std::move(*d));
}

// The runtime's test device (host memory behind the device interface), made by this
// module's copy of the runtime: handed over as device() hands a GPU, it tests the
// hand-over on machines without one (tests/python/test_cuda.py).
nb::capsule test_device() { return capsule_of(sg::test_device()); }

}  // namespace

NB_MODULE(_cuda, m) {
  m.doc() = "The Stagegraph runtime's CUDA device, for stagegraph._runtime (program.session(device='cuda')).";
  m.def("device", &device, nb::arg("index") = 0,
        "GPU `index` as a capsule for stagegraph._runtime (RuntimeError where there is no CUDA device).");
  m.def("test_device", &test_device,
        "The runtime's test device, made by this module, as a capsule like device()'s (for tests of the hand-over).");
}
