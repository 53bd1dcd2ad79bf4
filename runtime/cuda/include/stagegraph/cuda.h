// The CUDA device of the runtime (library sg_runtime_cuda, built when SG_WITH_CUDA
// finds nvcc and cuBLAS). The runtime links no CUDA library: a Session runs on a
// GPU when its options carry a CUDA device, one value from here.
//
//   auto gpu = sg::cuda_device(0);               // no GPU (or no driver): kUnsupported
//   if (!gpu.ok()) { ... gpu.status().message() ... }   // "no CUDA device: ..."
//   sg::SessionOptions options;
//   options.device = *gpu;                       // immutable, shared freely
//   auto session = sg::Session::create(program, "main", options);
#pragma once

#include <memory>

#include "stagegraph/export.h"
#include "stagegraph/runtime.h"

namespace sg {

// GPU `index` as a device: kUnsupported "no CUDA device: ..." without a GPU or
// driver, kInvalidArgument naming the GPUs there are for an index past them. Each
// Session opens its own stream, cuBLASLt handle, workspace and buffers on it.
SG_API Result<std::shared_ptr<const Device>> cuda_device(int index = 0);

}  // namespace sg
