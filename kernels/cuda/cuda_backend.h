// The CUDA backend: a device context per Session (stream, cuBLASLt handle,
// workspace) and prepared kernels for the nodes the GPU runs. This header needs
// no CUDA headers: the runtime and the tests include it from plain C++.
//
// How it is used:
//   1. device_count() says whether a GPU is usable (0 without one, or without a
//      driver; it never aborts).
//   2. Context::create(options) once per Session: its own stream, cuBLASLt
//      handle and workspace on one device.
//   3. prepare(op, attrs, inputs) for each node: non-null when this backend
//      covers the node (op, dtypes, ranks, attributes), else the node runs on
//      the CPU. Preparing needs no device.
//   4. kernel->run(ctx, inputs, outputs) with TensorRefs whose data pointers
//      are device memory (Context::allocate), enqueued on the context's stream.
//      Context::synchronize() waits, and reports errors found on the device
//      (an index out of range in take) as Status values naming the op.
//
// Numerics: f32 throughout; matmuls in full f32 (TF32 off) unless
// ContextOptions::allow_tf32, so results stay within f32 tolerance of the
// reference kernels. CUDA and cuBLAS errors, out of memory included, become
// Status values (kOutOfMemory, kRuntimeError, kUnsupported); nothing aborts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "ops/attrs.h"
#include "ops/op_table.h"
#include "interface/kernel.h"
#include "stagegraph/status.h"

namespace sg::kernels::cuda {

// GPUs this process can use; 0 without a GPU or driver.
int device_count();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_major = 0, sm_minor = 0;
  size_t total_memory = 0;
};
Result<DeviceInfo> device_info(int index);

struct ContextOptions {
  int device = 0;
  bool allow_tf32 = false;
  // cuBLASLt workspace; 0 picks 32 MiB on sm_90 and newer, 4 MiB elsewhere.
  size_t workspace_bytes = 0;
};

class ContextImpl;

class Context {
 public:
  static Result<std::unique_ptr<Context>> create(const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Device memory, 256-byte aligned. kOutOfMemory names the bytes asked for.
  Result<void*> allocate(size_t bytes);
  void release(void* p);
  // Host <-> device copies on the context's stream (asynchronous with pinned
  // host memory; synchronous otherwise, as CUDA makes them).
  Status upload(void* device_dst, const void* host_src, size_t bytes);
  Status download(void* host_dst, const void* device_src, size_t bytes);
  // Waits for the stream; reports an asynchronous CUDA error or a device-side
  // error flag raised by a kernel (e.g. take's index check) since the last call.
  Status synchronize();

  const ContextOptions& options() const;
  ContextImpl& impl() { return *impl_; }

 private:
  explicit Context(std::unique_ptr<ContextImpl> impl);
  std::unique_ptr<ContextImpl> impl_;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Inputs and outputs as for a reference KernelFn, with device data pointers.
  virtual Status run(Context& ctx, std::span<const TensorRef> inputs, std::span<TensorRef> outputs) = 0;
  // For --profile: "cuda:binary", "cublaslt:matmul", ...
  virtual const char* name() const = 0;
};

// A kernel for this node, or null when the GPU does not run it (the node then
// runs on the CPU with transfers around it). `inputs` as for xnnpack_prepare.
std::unique_ptr<Kernel> prepare(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> inputs);

}  // namespace sg::kernels::cuda
