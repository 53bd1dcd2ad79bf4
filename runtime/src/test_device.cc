#include "test_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

namespace sg::runtime {
namespace {

// Device memory of one context: each buffer its own allocation, known while live.
class TestMemory final : public Allocator {
 public:
  explicit TestMemory(TestDeviceCounts& counts) : counts_(counts) {}
  ~TestMemory() override {
    for (const auto& [p, bytes] : live_) std::free(p);
  }
  void* allocate(size_t bytes, size_t) override {
    // Padding past the end as host buffers have it: kernels may read a little past.
    void* p = std::aligned_alloc(kTensorAlignment, (bytes + kTensorPadding + kTensorAlignment - 1) /
                                                       kTensorAlignment * kTensorAlignment);
    if (p == nullptr) return nullptr;
    live_.emplace(static_cast<uint8_t*>(p), bytes);
    counts_.allocations.fetch_add(1, std::memory_order_relaxed);
    return p;
  }
  void deallocate(void* p, size_t, size_t) override {
    const auto it = live_.find(static_cast<uint8_t*>(p));
    if (it == live_.end()) std::abort();  // a broken invariant: freeing what this device never gave
    std::memset(p, 0xff, it->second);      // poison: a stale reader sees NaNs and -1s
    live_.erase(it);
    std::free(p);
    counts_.frees.fetch_add(1, std::memory_order_relaxed);
  }
  // True when [p, p + bytes) lies in one live buffer (any address for no bytes).
  bool owns(const void* p, size_t bytes) const {
    if (bytes == 0) return true;
    const uint8_t* b = static_cast<const uint8_t*>(p);
    auto it = live_.upper_bound(const_cast<uint8_t*>(b));
    if (it == live_.begin()) return false;
    --it;
    return b >= it->first && b + bytes <= it->first + it->second;
  }

 private:
  TestDeviceCounts& counts_;
  std::map<uint8_t*, size_t> live_;
};

class TestKernel final : public DeviceKernel {
 public:
  TestKernel(const NodeInfo& node) : node_(node) {}
  const char* name() const override { return "test:reference"; }
  const NodeInfo& node() const { return node_; }

 private:
  const NodeInfo& node_;
};

class TestContext final : public DeviceContext {
 public:
  TestContext(const TestDeviceOptions& options, std::shared_ptr<TestDeviceCounts> counts)
      : options_(options), counts_(std::move(counts)), memory_(*counts_) {}

  std::unique_ptr<DeviceKernel> prepare(const NodeInfo& node, std::span<const kernels::InputInfo>) override {
    if (node.kind != NodeKind::kOp || node.op == ops::OpId::Custom || node.kernel == nullptr) return nullptr;
    if (std::find(options_.host_ops.begin(), options_.host_ops.end(), node.op_name) != options_.host_ops.end())
      return nullptr;
    return std::make_unique<TestKernel>(node);
  }

  Allocator* memory() override { return &memory_; }

  Status upload(void* device_dst, const void* host_src, size_t bytes) override {
    if (!memory_.owns(device_dst, bytes)) return not_device("upload destination", device_dst);
    if (bytes > 0) std::memcpy(device_dst, host_src, bytes);
    counts_->uploads.fetch_add(1, std::memory_order_relaxed);
    counts_->upload_bytes.fetch_add(bytes, std::memory_order_relaxed);
    return Status::Ok();
  }

  Status download(void* host_dst, const void* device_src, size_t bytes) override {
    if (!memory_.owns(device_src, bytes)) return not_device("download source", device_src);
    if (bytes > 0) std::memcpy(host_dst, device_src, bytes);
    counts_->downloads.fetch_add(1, std::memory_order_relaxed);
    counts_->download_bytes.fetch_add(bytes, std::memory_order_relaxed);
    return Status::Ok();
  }

  Status launch(DeviceKernel& kernel, std::span<const kernels::TensorRef> inputs,
                std::span<kernels::TensorRef> outputs) override {
    const NodeInfo& node = static_cast<TestKernel&>(kernel).node();
    for (size_t k = 0; k < inputs.size(); ++k)
      if (!memory_.owns(inputs[k].data, inputs[k].nbytes()))
        return not_device("input " + std::to_string(k) + " of '" + node.op_name + "'", inputs[k].data);
    for (size_t k = 0; k < outputs.size(); ++k)
      if (!memory_.owns(outputs[k].data, outputs[k].nbytes()))
        return not_device("output " + std::to_string(k) + " of '" + node.op_name + "'", outputs[k].data);
    kernels::KernelContext ctx;
    const size_t scratch = kernels::reference_scratch_size(node.op, node.attrs, inputs);
    if (scratch_.size() < scratch) scratch_.resize(scratch);
    ctx.scratch = scratch_.data();
    ctx.scratch_size = scratch_.size();
    counts_->launches.fetch_add(1, std::memory_order_relaxed);
    return node.kernel(ctx, node.attrs, inputs, outputs);
  }

  Status synchronize() override { return Status::Ok(); }

 private:
  static Status not_device(const std::string& what, const void* p) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", p);
    return Status(StatusCode::kInternal, "test device: the " + what + " at " + addr +
                                             " is not memory of this device (a host address?)");
  }

  TestDeviceOptions options_;
  std::shared_ptr<TestDeviceCounts> counts_;
  TestMemory memory_;
  std::vector<uint8_t> scratch_;
};

}  // namespace

Result<std::unique_ptr<DeviceContext>> TestDevice::open(const DeviceOpenOptions&) const {
  return std::unique_ptr<DeviceContext>(std::make_unique<TestContext>(options_, counts_));
}

}  // namespace sg::runtime

namespace sg {

std::shared_ptr<const Device> test_device(const TestDeviceOptions& options) {
  return std::make_shared<runtime::TestDevice>(options);
}

}  // namespace sg
