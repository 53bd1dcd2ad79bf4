// Device frames planned like host frames (runtime/cuda/device_plan.h), without a
// device: which nodes may write in place, what lives in the arena, one arena per
// plan and one more per frame active at once, eviction, and a refused arena.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "device_plan.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// ---- device frames on the memory planner's plans ----

TEST(DevicePlan, InPlaceOnlyForElementwiseDeviceKernels) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  const std::vector<runtime::NodeKernel> table = runtime::device_plan_kernels(fn);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_TRUE(table[0].in_place_safe);  // mul
  EXPECT_TRUE(table[1].in_place_safe);  // add
  EXPECT_EQ(table[0].prepared, nullptr);
  auto rows = load_ok(row_graph());
  ASSERT_NE(rows, nullptr);
  for (const runtime::FunctionImpl& f : runtime::program_impl(*rows).functions) {
    const std::vector<runtime::NodeKernel> t = runtime::device_plan_kernels(f);
    for (size_t n = 0; n < f.nodes.size(); ++n) {
      const runtime::NodeInfo& node = f.nodes[n];
      const bool elementwise =
          ops::has_flag(node.op, ops::kElementwiseBinary) || ops::has_flag(node.op, ops::kElementwiseUnary);
      if (node.kind == runtime::NodeKind::kOp && !elementwise) {
        EXPECT_FALSE(t[n].in_place_safe) << node.op_name;
      }
    }
  }
}

// pair(x, y, z) = (x + y) + z with N = M = 5: x + y lives in the arena (60 bytes,
// 64 aligned: the whole lower bound), the result is owned (it leaves the frame).
TEST(DevicePlan, ArenaValuesAndOwnedResults) {
  auto program = load_ok(pair_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  const std::vector<runtime::NodeKernel> table = runtime::device_plan_kernels(fn);
  const Tensor x = Tensor::wrap(DType::kF32, std::vector<int64_t>{5, 3}, nullptr);
  const std::vector<Tensor> params = {x, x, x};
  const runtime::FramePlan plan = runtime::plan_device_frame(fn, table, params);
  const uint32_t sum = fn.nodes[0].outputs[0], result = fn.nodes[1].outputs[0];
  EXPECT_EQ(plan.placement[sum], runtime::Placement::kArena);
  EXPECT_EQ(plan.placement[result], runtime::Placement::kOwned);
  EXPECT_EQ(plan.lower_bound_bytes, 64u);
  EXPECT_EQ(plan.arena_bytes, 64u) << "one value, aligned";
  ASSERT_TRUE(plan.known[result]);
  EXPECT_EQ(plan.shape[result].rank, 2);
  EXPECT_EQ(plan.shape[result].dims[0], 5);
}

struct CountingDevice {
  int allocations = 0;
  int frees = 0;
  size_t bytes = 0;
  static Result<void*> allocate(void* user, size_t n) {
    auto* self = static_cast<CountingDevice*>(user);
    ++self->allocations;
    self->bytes += n;
    void* p = std::malloc(n);
    if (p == nullptr) return Status(StatusCode::kOutOfMemory, "test device: out of memory");
    return p;
  }
  static void free(void* user, void* p) {
    ++static_cast<CountingDevice*>(user)->frees;
    std::free(p);
  }
};

TEST(DevicePlanCache, OneArenaPerPlanAndOneMorePerFrameActiveAtOnce) {
  auto program = load_ok(pair_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  const std::vector<runtime::NodeKernel> table = runtime::device_plan_kernels(fn);
  CountingDevice device;
  {
    runtime::DevicePlanCache cache(&CountingDevice::allocate, &CountingDevice::free, &device);
    const Tensor x5 = Tensor::wrap(DType::kF32, std::vector<int64_t>{5, 3}, nullptr);
    const std::vector<Tensor> five = {x5, x5, x5};
    // Runs on the same shapes: one plan, one arena, allocated once.
    for (int run = 0; run < 3; ++run) {
      runtime::DevicePlanCache::Entry& e = cache.find(fn, table, five);
      auto arena = cache.acquire(e);
      ASSERT_TRUE(arena.ok());
      EXPECT_NE(*arena, nullptr);
      cache.release(e);
    }
    EXPECT_EQ(cache.plans(), 1u);
    EXPECT_EQ(device.allocations, 1);
    EXPECT_EQ(cache.allocations(), 1u);
    // Two frames of the plan at once (recursion): a second arena, kept.
    runtime::DevicePlanCache::Entry& e = cache.find(fn, table, five);
    auto a = cache.acquire(e);
    auto b = cache.acquire(e);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(*a, *b);
    cache.release(e);
    cache.release(e);
    EXPECT_EQ(device.allocations, 2);
    EXPECT_EQ(cache.arena_bytes(), 2 * e.plan.arena_bytes);
    EXPECT_EQ(cache.lower_bound_bytes(), 2 * e.plan.lower_bound_bytes);
    // Other shapes: another plan.
    const Tensor x7 = Tensor::wrap(DType::kF32, std::vector<int64_t>{7, 3}, nullptr);
    const std::vector<Tensor> seven = {x7, x7, x7};
    runtime::DevicePlanCache::Entry& e7 = cache.find(fn, table, seven);
    EXPECT_NE(&e7, &e);
    EXPECT_EQ(cache.plans(), 2u);
    EXPECT_EQ(e7.plan.lower_bound_bytes, 128u);  // 7 * 3 * 4 = 84 bytes, 64 aligned
  }
  EXPECT_EQ(device.frees, device.allocations) << "every arena is freed with the cache";
}

TEST(DevicePlanCache, EvictsAnIdlePlanPastTheLimit) {
  auto program = load_ok(pair_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  const std::vector<runtime::NodeKernel> table = runtime::device_plan_kernels(fn);
  CountingDevice device;
  runtime::DevicePlanCache cache(&CountingDevice::allocate, &CountingDevice::free, &device);
  for (int64_t n = 1; n <= int64_t(runtime::DevicePlanCache::kMaxPlans) + 3; ++n) {
    const Tensor x = Tensor::wrap(DType::kF32, std::vector<int64_t>{n, 3}, nullptr);
    const std::vector<Tensor> params = {x, x, x};
    runtime::DevicePlanCache::Entry& e = cache.find(fn, table, params);
    ASSERT_TRUE(cache.acquire(e).ok());
    cache.release(e);
  }
  EXPECT_EQ(cache.plans(), runtime::DevicePlanCache::kMaxPlans);
  EXPECT_EQ(device.frees, 3);
}

TEST(DevicePlanCache, AFailedArenaIsTheDevicesStatus) {
  auto program = load_ok(pair_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  const std::vector<runtime::NodeKernel> table = runtime::device_plan_kernels(fn);
  const auto refuse = [](void*, size_t n) -> Result<void*> {
    return Status(StatusCode::kOutOfMemory, "cuda: out of memory allocating " + std::to_string(n) + " bytes");
  };
  runtime::DevicePlanCache cache(+refuse, &CountingDevice::free, nullptr);
  const Tensor x = Tensor::wrap(DType::kF32, std::vector<int64_t>{5, 3}, nullptr);
  const std::vector<Tensor> params = {x, x, x};
  runtime::DevicePlanCache::Entry& e = cache.find(fn, table, params);
  auto arena = cache.acquire(e);
  ASSERT_FALSE(arena.ok());
  EXPECT_EQ(arena.status().code(), StatusCode::kOutOfMemory);
  EXPECT_EQ(e.active, 0) << "a failed acquire leaves no frame counted";
}

}  // namespace
}  // namespace sg::testing
