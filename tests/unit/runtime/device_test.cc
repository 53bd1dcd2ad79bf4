// Running a Session on a device, the device-independent parts: device strings,
// what Session::create says without the device's backend, the plans of device
// frames (device_plan.h) and the copies placement inserts for whole programs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "device.h"
#include "device_plan.h"
#include "placement.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

using runtime::DeviceKind;
using runtime::parse_device;

TEST(DeviceString, CpuCudaAndCudaN) {
  auto cpu = parse_device("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().message();
  EXPECT_EQ(cpu->kind, DeviceKind::kCpu);
  EXPECT_EQ(cpu->str(), "cpu");
  auto cuda = parse_device("cuda");
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda->kind, DeviceKind::kCuda);
  EXPECT_EQ(cuda->index, 0);
  EXPECT_EQ(cuda->str(), "cuda:0");
  auto third = parse_device("cuda:3");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->index, 3);
  auto last = parse_device("cuda:1023");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->index, 1023);
}

TEST(DeviceString, MalformedOnesSayWhatIsAccepted) {
  for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cuda:1024", "cuda:00000",
                          "cuda0", "cpu:0", " cuda"}) {
    auto r = parse_device(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("invalid device '" + std::string(bad) + "'"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("expected cpu, cuda or cuda:N"), std::string::npos) << r.status().message();
  }
}

TEST(SessionDevice, CpuIsTheDefaultAndRuns) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  SessionOptions options;
  EXPECT_EQ(options.device, "cpu");
  options.device = "cpu";
  auto session = Session::create(program, "affine", options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_TRUE((*session)->set_input("x", make_tensor<float>(DType::kF32, {1, 3}, {1, 2, 3})).ok());
  ASSERT_TRUE((*session)->run().ok());
  auto y = (*session)->output(0);
  ASSERT_TRUE(y.ok());
  EXPECT_FLOAT_EQ(y->data_as<float>()[2], 9.0f);
}

TEST(SessionDevice, CudaWithoutItsBackendIsUnsupported) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  for (const char* device : {"cuda", "cuda:1"}) {
    SessionOptions options;
    options.device = device;
    auto session = Session::create(program, "affine", options);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(session.status().message().find("device_backend"), std::string::npos) << session.status().message();
  }
}

TEST(SessionDevice, AMalformedDeviceIsAnInvalidArgument) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  SessionOptions options;
  options.device = "cuda:one";
  auto session = Session::create(program, "affine", options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(session.status().message().find("cuda:one"), std::string::npos) << session.status().message();
}

// ---- device frames on the memory planner's plans ----

TEST(DevicePlan, InPlaceOnlyForElementwiseDeviceKernels) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = program->impl().functions[0];
  const std::vector<runtime::NodeKernel> table = runtime::device_plan_kernels(fn);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_TRUE(table[0].in_place_safe);  // mul
  EXPECT_TRUE(table[1].in_place_safe);  // add
  EXPECT_EQ(table[0].prepared, nullptr);
  auto rows = load_ok(row_graph());
  ASSERT_NE(rows, nullptr);
  for (const runtime::FunctionImpl& f : rows->impl().functions) {
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
  const runtime::FunctionImpl& fn = program->impl().functions[0];
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
  const runtime::FunctionImpl& fn = program->impl().functions[0];
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
  const runtime::FunctionImpl& fn = program->impl().functions[0];
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
  const runtime::FunctionImpl& fn = program->impl().functions[0];
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

// ---- copies for whole programs ----

// affine(x) = x * 2 + c with mul on the CPU and add on the GPU: the product goes
// up once, the constant c with the Session (not per run), the result comes down.
TEST(DeviceTransfers, AMixedEntryCopiesEachValueOnce) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  const runtime::ProgramPlacement p = runtime::place(
      program->impl(), [](const runtime::FunctionImpl&, const runtime::NodeInfo& node) { return node.op_name == "add"; });
  const runtime::FunctionPlacement& f = p.functions[0];
  EXPECT_FALSE(f.device_function);
  EXPECT_NE(f.reason.find("mul"), std::string::npos) << f.reason;
  EXPECT_EQ(f.nodes[0].device, runtime::Device::kCpu);
  EXPECT_TRUE(f.nodes[0].before.empty());
  EXPECT_EQ(f.nodes[1].device, runtime::Device::kGpu);
  ASSERT_EQ(f.nodes[1].before.size(), 1u);
  EXPECT_EQ(f.nodes[1].before[0].value, program->impl().functions[0].nodes[0].outputs[0]);
  EXPECT_EQ(f.nodes[1].before[0].to, runtime::Device::kGpu);
  ASSERT_EQ(f.results.size(), 1u);
  EXPECT_EQ(f.results[0].to, runtime::Device::kCpu);
  EXPECT_EQ(f.transfers, 2u);
}

// A loop whose cond is on the GPU but whose body holds a CPU node: host-driven,
// the carried values cross in each body run, and nothing else does.
TEST(DeviceTransfers, AHostDrivenLoopCountsItsCopiesPerIteration) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  std::set<std::string> cpu = {"add"};
  const runtime::ProgramPlacement p = runtime::place(
      program->impl(), [&](const runtime::FunctionImpl&, const runtime::NodeInfo& node) {
        return cpu.count(node.op_name) == 0;
      });
  const runtime::NodePlacement& loop = p.functions[0].nodes[0];
  EXPECT_FALSE(loop.device_control);
  EXPECT_NE(loop.reason.find("add"), std::string::npos) << loop.reason;
  EXPECT_NE(loop.reason.find("total_body"), std::string::npos) << loop.reason;
  // The cond (less on the GPU, from host-held parameters): its operand i goes up
  // and n go up, its bool comes down to decide.
  const runtime::FunctionPlacement& cond = p.functions[1];
  EXPECT_FALSE(cond.device_function);
  EXPECT_EQ(cond.results.size(), 1u);
  EXPECT_EQ(cond.transfers, 3u);
  // The body's adds run on the CPU on host parameters: no copies at all.
  const runtime::FunctionPlacement& body = p.functions[2];
  EXPECT_EQ(body.transfers, 0u);
}

}  // namespace
}  // namespace sg::testing
