// Device frames planned like host frames (DESIGN.md #6, #12), part of the device
// backends (built with runtime/cuda, not in the CPU runtime): a device executor
// reuses the memory planner (memory_plan.h) for the values of a function it runs,
// and gives each plan one device arena of FramePlan::arena_bytes (one cudaMalloc),
// a further one only for each frame on the same plan active at once (recursion).
// Device-independent, so that the plans are tested without a device.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "memory_plan.h"
#include "program_impl.h"

namespace sg::runtime {

// The NodeKernel table the planner is given for device frames: no prepared
// kernels, and in-place reuse (an output over a dying input of its shape) only for
// the ops whose device kernels read each element before writing it: elementwise
// unary and binary ops, where and fused elementwise chains.
std::vector<NodeKernel> device_plan_kernels(const FunctionImpl& fn);

// A device frame's plan for parameters of these dtypes and shapes (`params`, one
// per parameter of `fn`; only dtype and shape are read).
FramePlan plan_device_frame(const FunctionImpl& fn, std::span<const NodeKernel> kernels,
                            std::span<const Tensor> params);

// The plans of one function and the arenas given to them: find() returns the plan
// for these parameter shapes (made on first use), acquire() the arena of its next
// active frame (allocating one with `allocate` when none is free), release() gives
// it back. At most kMaxPlans plans; an idle one is evicted (its arenas freed with
// `free`) to make room.
class DevicePlanCache {
 public:
  using AllocateFn = Result<void*> (*)(void* user, size_t bytes);
  using FreeFn = void (*)(void* user, void* p);
  static constexpr size_t kMaxPlans = 8;

  DevicePlanCache(AllocateFn allocate, FreeFn free, void* user) : allocate_(allocate), free_(free), user_(user) {}
  ~DevicePlanCache() { clear(); }
  DevicePlanCache(const DevicePlanCache&) = delete;
  DevicePlanCache& operator=(const DevicePlanCache&) = delete;

  struct Entry {
    FramePlan plan;
    std::vector<void*> arenas;  // one per frame on this plan active at once
    int active = 0;
  };
  Entry& find(const FunctionImpl& fn, std::span<const NodeKernel> kernels, std::span<const Tensor> params);
  Result<uint8_t*> acquire(Entry& e);
  void release(Entry& e) { --e.active; }
  void clear();
  // Device arena bytes held (all plans, all their arenas), and arena allocations made.
  size_t arena_bytes() const;
  // The plans' lower bounds (largest live set), counted once per arena like arena_bytes.
  size_t lower_bound_bytes() const;
  uint64_t allocations() const { return allocations_; }
  size_t plans() const { return entries_.size(); }

 private:
  AllocateFn allocate_;
  FreeFn free_;
  void* user_;
  std::vector<std::unique_ptr<Entry>> entries_;
  uint64_t allocations_ = 0;
  std::vector<Tensor> slots_;
};

}  // namespace sg::runtime
