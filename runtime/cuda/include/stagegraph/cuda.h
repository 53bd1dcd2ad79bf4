// The CUDA backend of the runtime (library sg_runtime_cuda, built when
// SG_WITH_CUDA finds nvcc and cuBLAS). The runtime links no CUDA library: a
// Session runs on a GPU when its options name the device and pass this backend.
//
//   sg::SessionOptions options;
//   options.device = "cuda:0";                    // or "cuda"
//   options.device_backend = sg::cuda_backend();  // an immutable object, shared freely
//   auto session = sg::Session::create(program, "main", options);
//   // no GPU (or no driver): kUnsupported "no CUDA device: <the CUDA error>"
#pragma once

#include "stagegraph/export.h"

namespace sg {

class DeviceBackend;

// The CUDA backend; never null, stateless (each Session opens its own stream,
// cuBLASLt handle, workspace and device memory through it).
SG_API const DeviceBackend* cuda_backend();

}  // namespace sg
