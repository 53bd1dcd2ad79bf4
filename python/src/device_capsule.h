// How stagegraph._cuda hands a device to stagegraph._runtime (SPEC §14): a
// PyCapsule holding a heap std::shared_ptr<const sg::Device> (sg::cuda_device(N)),
// under the name below, freed by the capsule's destructor (in _cuda).
//
// Each module links the runtime statically, so each has its own copy of its code.
// What crosses between them is the sg::Device object itself: the runtime in
// _runtime calls only its virtual functions (Device::open, then DeviceContext's,
// DeviceKernel's and the Allocator's), whose code is _cuda's; the values they
// pass (NodeInfo, TensorRef, Status, Result) are plain data of one layout, as
// both modules are built from one source tree in one build, and their memory is
// the process's operator new/delete (libstdc++'s, shared). Neither module exports
// anything but its PyInit (python/CMakeLists.txt's version script), so neither
// binds to the other's copy of a function or of static state. The name carries the
// compiler's version so that modules of different builds do not pair.
#pragma once

#define SG_DEVICE_CAPSULE_NAME "stagegraph._cuda.Device (" __VERSION__ ")"
