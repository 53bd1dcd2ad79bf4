// Running a Session on a device, the device-independent parts: device strings,
// what Session::create says without the device's backend, and the copies
// placement inserts for whole programs (device frame plans: runtime_cuda tests).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "device.h"
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

// ---- copies for whole programs ----

// affine(x) = x * 2 + c with mul on the CPU and add on the GPU: the product goes
// up once, the constant c with the Session (not per run), the result comes down.
TEST(DeviceTransfers, AMixedEntryCopiesEachValueOnce) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  const runtime::ProgramPlacement p = runtime::place(
      runtime::program_impl(*program),
      [](const runtime::FunctionImpl&, const runtime::NodeInfo& node) { return node.op_name == "add"; });
  const runtime::FunctionPlacement& f = p.functions[0];
  EXPECT_FALSE(f.device_function);
  EXPECT_NE(f.reason.find("mul"), std::string::npos) << f.reason;
  EXPECT_EQ(f.nodes[0].device, runtime::Device::kCpu);
  EXPECT_TRUE(f.nodes[0].before.empty());
  EXPECT_EQ(f.nodes[1].device, runtime::Device::kGpu);
  ASSERT_EQ(f.nodes[1].before.size(), 1u);
  EXPECT_EQ(f.nodes[1].before[0].value, runtime::program_impl(*program).functions[0].nodes[0].outputs[0]);
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
      runtime::program_impl(*program), [&](const runtime::FunctionImpl&, const runtime::NodeInfo& node) {
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
