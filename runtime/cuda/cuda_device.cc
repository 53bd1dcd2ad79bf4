// The CUDA device (DESIGN.md #16): the device interface (device_interface.h)
// over the CUDA kernels (kernels/cuda): placement is their prepare(), memory is
// device buffers kept by size for reuse (cudaFree synchronises the whole device),
// copies and kernels run in order on the Session's own stream. The executor
// drives everything else: frames, If/While/Call, limits, cancellation, profiling.
// Kernel faults surface at the next synchronisation (a copy to the host) and are
// reported at the node that waited.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "cuda/cuda_backend.h"
#include "device_interface.h"
#include "stagegraph/cuda.h"

namespace sg::runtime {
namespace {

namespace kc = kernels::cuda;

// Device memory for one Session: freed buffers kept by size for the next use.
// Reusing one is safe on the Session's single stream: the kernels that read it
// were queued before any that will write it again.
class CudaMemory final : public Allocator {
 public:
  static constexpr size_t kMaxHeldBytes = size_t(256) << 20;
  explicit CudaMemory(kc::Context& ctx) : ctx_(ctx) {}
  ~CudaMemory() override { clear(); }
  void* allocate(size_t bytes, size_t) override {
    const auto it = free_.find(bytes);
    if (it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      held_ -= bytes;
      return p;
    }
    Result<void*> got = ctx_.allocate(bytes);
    if (!got.ok() && !free_.empty()) {
      clear();  // out of memory: give back what is kept, and try once more
      got = ctx_.allocate(bytes);
    }
    return got.ok() ? *got : nullptr;
  }
  void deallocate(void* p, size_t bytes, size_t) override {
    if (held_ + bytes > kMaxHeldBytes) {
      ctx_.release(p);
      return;
    }
    free_.emplace(bytes, p);
    held_ += bytes;
  }
  void clear() {
    for (const auto& [bytes, p] : free_) ctx_.release(p);
    free_.clear();
    held_ = 0;
  }
  size_t held_bytes() const { return held_; }

 private:
  kc::Context& ctx_;
  std::unordered_multimap<size_t, void*> free_;
  size_t held_ = 0;
};

class CudaKernel final : public DeviceKernel {
 public:
  explicit CudaKernel(std::unique_ptr<kc::Kernel> kernel) : kernel_(std::move(kernel)) {}
  const char* name() const override { return kernel_->name(); }
  kc::Kernel& kernel() { return *kernel_; }

 private:
  std::unique_ptr<kc::Kernel> kernel_;
};

class CudaContext final : public DeviceContext {
 public:
  explicit CudaContext(std::unique_ptr<kc::Context> ctx) : ctx_(std::move(ctx)), memory_(*ctx_) {}
  ~CudaContext() override { (void)ctx_->synchronize(); }

  std::unique_ptr<DeviceKernel> prepare(const NodeInfo& node, std::span<const kernels::InputInfo> inputs) override {
    std::unique_ptr<kc::Kernel> k = kc::prepare(node.op, node.attrs, inputs);
    return k != nullptr ? std::make_unique<CudaKernel>(std::move(k)) : nullptr;
  }
  Allocator* memory() override { return &memory_; }
  Status upload(void* device_dst, const void* host_src, size_t bytes) override {
    return bytes > 0 ? ctx_->upload(device_dst, host_src, bytes) : Status::Ok();
  }
  Status download(void* host_dst, const void* device_src, size_t bytes) override {
    if (bytes > 0) SG_RETURN_IF_ERROR(ctx_->download(host_dst, device_src, bytes));
    return ctx_->synchronize();
  }
  Status launch(DeviceKernel& kernel, std::span<const kernels::TensorRef> inputs,
                std::span<kernels::TensorRef> outputs) override {
    return static_cast<CudaKernel&>(kernel).kernel().run(*ctx_, inputs, outputs);
  }
  Status synchronize() override { return ctx_->synchronize(); }
  size_t cached_bytes() const override { return memory_.held_bytes(); }

 private:
  std::unique_ptr<kc::Context> ctx_;  // before the memory, whose buffers go back through it
  CudaMemory memory_;
};

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index) : index_(index) {}
  std::string name() const override { return "cuda:" + std::to_string(index_); }
  Result<std::unique_ptr<DeviceContext>> open(const DeviceOpenOptions& options) const override {
    kc::ContextOptions copts;
    copts.device = index_;
    copts.allow_tf32 = options.allow_tf32;
    SG_ASSIGN_OR_RETURN(std::unique_ptr<kc::Context> ctx, kc::Context::create(copts));
    return std::unique_ptr<DeviceContext>(std::make_unique<CudaContext>(std::move(ctx)));
  }

 private:
  int index_;
};

}  // namespace
}  // namespace sg::runtime

namespace sg {

Result<std::shared_ptr<const Device>> cuda_device(int index) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: leave no error behind for later calls
    return Status(StatusCode::kUnsupported, std::string("no CUDA device: ") + cudaGetErrorString(e));
  }
  if (count == 0) return Status(StatusCode::kUnsupported, "no CUDA device: the driver reports none");
  if (index < 0 || index >= count)
    return Status(StatusCode::kInvalidArgument,
                  "no CUDA device " + std::to_string(index) + ": this machine has " + std::to_string(count) +
                      (count == 1 ? " (cuda:0)" : " (cuda:0 to cuda:" + std::to_string(count - 1) + ")"));
  return std::shared_ptr<const Device>(std::make_shared<runtime::CudaDevice>(index));
}

}  // namespace sg
