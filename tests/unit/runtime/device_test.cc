// Running Sessions on a device through the device interface, on the test device
// (host memory behind the interface, its buffers its own, every copy counted):
// placement, transfer counts, frames on the device (If/While/Call, recursion),
// mixed programs with host-only nodes, and errors at a node. The C API's device
// strings are checked here too.
#include <gtest/gtest.h>

#include <string>

#include "device.h"
#include "device_placement.h"
#include "test_device.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

using runtime::DeviceKind;
using runtime::parse_device;

std::shared_ptr<runtime::TestDevice> make_test_device(std::vector<std::string> host_ops = {"print"}) {
  TestDeviceOptions o;
  o.host_ops = std::move(host_ops);
  return std::make_shared<runtime::TestDevice>(o);
}

std::unique_ptr<Session> session_on(const std::shared_ptr<const Program>& program, const std::string& entry,
                                    std::shared_ptr<const Device> device, bool profile = false) {
  SessionOptions options;
  options.device = std::move(device);
  options.profile = profile;
  auto session = Session::create(program, entry, options);
  EXPECT_TRUE(session.ok()) << session.status().message();
  return session.ok() ? std::move(session).value() : nullptr;
}

// The "transfer" rows of a profile: uploads and downloads.
std::pair<uint64_t, uint64_t> transfers(const Session& s) {
  uint64_t up = 0, down = 0;
  for (const NodeProfile& p : s.profile()) {
    if (p.op != "transfer") continue;
    (p.kernel.find("host-to-device") != std::string::npos ? up : down) += p.calls;
  }
  return {up, down};
}

TEST(DeviceString, CpuTestCudaAndCudaN) {
  EXPECT_EQ(parse_device("cpu")->kind, DeviceKind::kCpu);
  EXPECT_EQ(parse_device("test")->kind, DeviceKind::kTest);
  EXPECT_EQ(parse_device("test")->str(), "test");
  EXPECT_EQ(parse_device("cuda")->str(), "cuda:0");
  EXPECT_EQ(parse_device("cuda:1023")->index, 1023);
  for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:x", "cuda:-1", "cuda:1024", "cpu:0", "test:0"}) {
    auto r = parse_device(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("expected cpu, test, cuda or cuda:N"), std::string::npos);
  }
}

TEST(SessionDevice, TheDefaultIsTheCpu) {
  SessionOptions options;
  EXPECT_EQ(options.device, nullptr);
  EXPECT_EQ(test_device()->name(), "test");
}

TEST(DevicePlacementTest, TheDeviceTakesTheNodesItHasKernelsFor) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  auto all = make_test_device()->open({});
  ASSERT_TRUE(all.ok());
  runtime::DevicePlacement everything(runtime::program_impl(*program), **all);
  EXPECT_EQ(everything.device_nodes(), 2u);
  auto some = make_test_device({"add"})->open({});
  ASSERT_TRUE(some.ok());
  runtime::DevicePlacement mixed(runtime::program_impl(*program), **some);
  EXPECT_EQ(mixed.device_nodes(), 1u);
  EXPECT_NE(mixed.at(0, 0), nullptr);  // mul
  EXPECT_EQ(mixed.at(0, 1), nullptr);  // add stays on the host
}

// affine(x) = x * 2 + c, all on the device: x goes up each run, the constants
// once per Session, the result comes down each run.
TEST(DeviceTransfers, ConstantsGoUpOnceInputsAndResultsEachRun) {
  auto program = load_ok(affine_graph());
  auto device = make_test_device();
  auto s = session_on(program, "affine", device);
  ASSERT_NE(s, nullptr);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {1, 3}, {1, 2, 3})).ok());
    ASSERT_TRUE(s->run().ok());
    auto y = s->output(0);
    ASSERT_TRUE(y.ok());
    EXPECT_FLOAT_EQ(y->data_as<float>()[0], 3.0f);
    EXPECT_FLOAT_EQ(y->data_as<float>()[2], 9.0f);
  }
  EXPECT_EQ(transfers(*s), std::make_pair(uint64_t(4), uint64_t(2)));
  EXPECT_EQ(device->counts().uploads.load(), 4u);
  EXPECT_EQ(device->counts().downloads.load(), 2u);
  EXPECT_EQ(device->counts().launches.load(), 4u);
}

// mul on the host, add on the device: the product and c go up, the sum comes down.
TEST(DeviceTransfers, AMixedProgramCopiesWhereValuesCross) {
  auto program = load_ok(affine_graph());
  auto device = make_test_device({"mul"});
  auto s = session_on(program, "affine", device, /*profile=*/true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})).ok());
  ASSERT_TRUE(s->run().ok());
  auto y = s->output(0);
  ASSERT_TRUE(y.ok());
  EXPECT_FLOAT_EQ(y->data_as<float>()[5], 15.0f);
  EXPECT_EQ(transfers(*s), std::make_pair(uint64_t(2), uint64_t(1)));
  bool add_on_device = false, mul_on_host = false;
  for (const NodeProfile& p : s->profile()) {
    add_on_device |= p.op == "add" && p.kernel == "test:reference";
    mul_on_host |= p.op == "mul" && p.kernel.rfind("test:", 0) != 0;
  }
  EXPECT_TRUE(add_on_device);
  EXPECT_TRUE(mul_on_host);
}

// A While whose cond and body run on the device: the host reads each condition
// (a download per iteration) and drives the loop.
TEST(DeviceFrames, AWhileLoopRunsItsBodyOnTheDevice) {
  auto program = load_ok(while_sum_graph());
  auto device = make_test_device();
  auto s = session_on(program, "total", device);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input(0, scalar_i64(5)).ok());
  ASSERT_TRUE(s->run().ok());
  auto y = s->output(0);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->data_as<int64_t>()[0], 10);
  EXPECT_GE(device->counts().launches.load(), 15u);  // 6 conds, 5 bodies of two adds
  EXPECT_GE(transfers(*s).second, 6u);               // each condition, and the result
}

// Recursion through Call (and the If inside it) on the device, and the executor's
// depth limit, with the CPU's message.
TEST(DeviceFrames, RecursionRunsAndTheDepthLimitHolds) {
  auto program = load_ok(recursive_graph("mul", 1, 1));
  auto s = session_on(program, "rec", make_test_device());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input(0, scalar_i64(10)).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_EQ(s->output(0)->data_as<int64_t>()[0], 3628800);

  SessionOptions options;
  options.device = make_test_device();
  options.max_call_depth = 5;
  auto limited = Session::create(program, "rec", options);
  ASSERT_TRUE(limited.ok());
  ASSERT_TRUE((*limited)->set_input(0, scalar_i64(100)).ok());
  const Status st = (*limited)->run();
  EXPECT_EQ(st.code(), StatusCode::kLimitExceeded);
  EXPECT_NE(st.message().find("recursion depth limit 5 exceeded"), std::string::npos) << st.message();
}

TEST(DeviceFrames, CancelEndsARunOnTheDevice) {
  auto program = load_ok(while_sum_graph());
  auto s = session_on(program, "total", make_test_device());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input(0, scalar_i64(1000)).ok());
  s->cancel();  // before the run: it ends as soon as it starts
  EXPECT_EQ(s->run().code(), StatusCode::kCancelled);
  ASSERT_TRUE(s->run().ok());
  EXPECT_EQ(s->output(0)->data_as<int64_t>()[0], 499500);
}

// A kernel that fails on the device is reported at its node, naming the op and
// the device; the Session stays usable.
TEST(DeviceErrors, AFailingDeviceKernelNamesItsNode) {
  auto program = load_ok(row_graph());
  auto s = session_on(program, "row", make_test_device());
  ASSERT_NE(s, nullptr);
  std::vector<float> x(8 * 16, 1.0f);
  ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {8, 16}, x)).ok());
  ASSERT_TRUE(s->set_input("t", scalar_i64(100)).ok());
  const Status st = s->run();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(":3:9: error: 'slice' on test: "), std::string::npos) << st.message();
  ASSERT_TRUE(s->set_input("t", scalar_i64(2)).ok());
  ASSERT_TRUE(s->run().ok()) << "the Session stays usable";
  EXPECT_FLOAT_EQ(s->output(0)->data_as<float>()[0], -1.0f);
}

// The test device refuses host memory in a launch or copy: a kernel given a host
// pointer by mistake fails instead of reading it.
TEST(TestDeviceMemory, HostAddressesAreRefused) {
  auto program = load_ok(affine_graph());
  auto ctx = make_test_device()->open({});
  ASSERT_TRUE(ctx.ok());
  const runtime::NodeInfo& mul = runtime::program_impl(*program).functions[0].nodes[0];
  auto kernel = (*ctx)->prepare(mul, {});
  ASSERT_NE(kernel, nullptr);
  float host[3] = {1, 2, 3}, two = 2, out[3];
  kernels::TensorRef in[2], res[1];
  in[0].dtype = in[1].dtype = res[0].dtype = DType::kF32;
  in[0].rank = res[0].rank = 1;
  in[0].shape[0] = res[0].shape[0] = 3;
  in[0].data = host;
  in[1].data = &two;
  res[0].data = out;
  const Status st = (*ctx)->launch(*kernel, in, res);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("not memory of this device"), std::string::npos) << st.message();
  EXPECT_EQ((*ctx)->upload(host, out, sizeof out).code(), StatusCode::kInternal);
  // Its own buffers pass, and are poisoned once freed.
  Allocator* mem = (*ctx)->memory();
  void* a = mem->allocate(12, 64);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE((*ctx)->upload(a, host, 12).ok());
  EXPECT_TRUE((*ctx)->download(out, a, 12).ok());
  EXPECT_FLOAT_EQ(out[2], 3.0f);
  mem->deallocate(a, 12, 64);
  EXPECT_EQ((*ctx)->download(out, a, 12).code(), StatusCode::kInternal);
}

TEST(TestDeviceMemory, DeviceTensorsAreFreedThroughTheDevice) {
  auto device = make_test_device();
  auto ctx = device->open({});
  ASSERT_TRUE(ctx.ok());
  {
    const int64_t n = 16;
    auto t = Tensor::empty_on_device(DType::kF32, Span<const int64_t>(&n, 1), (*ctx)->memory());
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->device_memory(), (*ctx)->memory());
    EXPECT_EQ(t->capacity_bytes(), 0u);
    EXPECT_FALSE(t->clone().ok());
    Tensor copy = *t;
    EXPECT_EQ(device->counts().frees.load(), 0u);
  }
  EXPECT_EQ(device->counts().allocations.load(), 1u);
  EXPECT_EQ(device->counts().frees.load(), 1u);
}

}  // namespace
}  // namespace sg::testing
