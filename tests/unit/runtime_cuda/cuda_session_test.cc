// Sessions on the CUDA device (runtime/cuda): without a GPU, sg::cuda_device says
// "no CUDA device" (these tests run everywhere); with one, small graphs covering
// straight lines, host-driven loops, branches and recursion run on it and match
// the CPU Session (these skip, saying so, without a GPU). Which nodes the CUDA
// kernels cover (placement) needs no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cuda/cuda_backend.h"
#include "device_interface.h"
#include "stagegraph/cuda.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

bool have_gpu() { return kernels::cuda::device_count() > 0; }

SessionOptions on_gpu(int index = 0) {
  SessionOptions options;
  auto gpu = cuda_device(index);
  EXPECT_TRUE(gpu.ok()) << gpu.status().message();
  if (gpu.ok()) options.device = *gpu;
  return options;
}

TEST(CudaSession, WithoutAGpuCreateSaysSo) {
  if (have_gpu()) GTEST_SKIP() << "a CUDA device is visible: the no-device path is not reachable here";
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  for (int index : {0, 7}) {
    auto gpu = cuda_device(index);
    ASSERT_FALSE(gpu.ok()) << index;
    EXPECT_EQ(gpu.status().code(), StatusCode::kUnsupported);
    EXPECT_EQ(gpu.status().message().rfind("no CUDA device: ", 0), 0u) << gpu.status().message();
  }
  // The CPU still works beside it.
  auto session = Session::create(program, "affine");
  EXPECT_TRUE(session.ok()) << session.status().message();
}

TEST(CudaSession, ABadDeviceIndexNamesTheDevicesThereAre) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible: the GPU tests ran nothing here";
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  auto gpu = cuda_device(1023);
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(gpu.status().message().find("this machine has"), std::string::npos) << gpu.status().message();
}

// Runs `entry` on the CPU and on the GPU with the same inputs; outputs must agree
// within 1e-5 of their magnitude.
void expect_same_on_gpu(const GraphSpec& graph, const std::string& entry, const std::vector<Tensor>& inputs) {
  auto program = load_ok(graph);
  ASSERT_NE(program, nullptr);
  auto cpu = Session::create(program, entry);
  ASSERT_TRUE(cpu.ok()) << cpu.status().message();
  SessionOptions options = on_gpu();
  options.profile = true;
  auto gpu = Session::create(program, entry, options);
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  for (size_t k = 0; k < inputs.size(); ++k) {
    ASSERT_TRUE((*cpu)->set_input(k, inputs[k]).ok());
    ASSERT_TRUE((*gpu)->set_input(k, inputs[k]).ok());
  }
  ASSERT_TRUE((*cpu)->run().ok());
  for (int run = 0; run < 2; ++run) {  // the second on the plans and arenas of the first
    const Status s = (*gpu)->run();
    ASSERT_TRUE(s.ok()) << s.message();
    for (size_t i = 0; i < (*cpu)->num_outputs(); ++i) {
      auto want = (*cpu)->output(i);
      auto got = (*gpu)->output(i);
      ASSERT_TRUE(want.ok() && got.ok());
      ASSERT_EQ(want->dtype(), got->dtype());
      ASSERT_EQ(want->numel(), got->numel());
      if (want->dtype() == DType::kF32) {
        double scale = 0, err = 0;
        for (int64_t e = 0; e < want->numel(); ++e) {
          scale = std::max(scale, double(std::fabs(want->data_as<float>()[e])));
          err = std::max(err, double(std::fabs(want->data_as<float>()[e] - got->data_as<float>()[e])));
        }
        EXPECT_LE(err, 1e-5 * std::max(scale, 1e-30)) << entry << " output " << i;
      } else {
        EXPECT_EQ(std::memcmp(want->data(), got->data(), want->nbytes()), 0) << entry << " output " << i;
      }
    }
  }
  bool gpu_node = false;
  for (const NodeProfile& p : (*gpu)->profile()) gpu_node = gpu_node || p.kernel.rfind("cuda", 0) == 0;
  EXPECT_TRUE(gpu_node) << "no node of " << entry << " ran on the GPU";
}

TEST(CudaSession, StraightLineMatchesTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible: the GPU tests ran nothing here";
  expect_same_on_gpu(affine_graph(), "affine", {make_tensor<float>(DType::kF32, {2, 3}, {1, -2, 3, 4.5f, 5, -6})});
  const Tensor x = make_tensor<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_same_on_gpu(pair_graph(), "pair", {x, x, x});
}

TEST(CudaSession, HostDrivenLoopMatchesTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible: the GPU tests ran nothing here";
  expect_same_on_gpu(while_sum_graph(), "total", {scalar_i64(100)});
}

TEST(CudaSession, RecursionRunsOnTheFrameStack) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible: the GPU tests ran nothing here";
  expect_same_on_gpu(recursive_graph("add", 0, 0), "rec", {scalar_i64(200)});
}

// With the real coverage of the CUDA kernels (prepare() needs no device): the
// f32 affine's nodes and the loop's i64 scalar ops have GPU kernels.
TEST(CudaPlacement, TheCudaKernelsCoverageDecidesWithoutADevice) {
  const auto covers = [](const runtime::FunctionImpl& fn, const runtime::NodeInfo& node) {
    std::vector<kernels::InputInfo> infos(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const runtime::ValueInfo& v = fn.values[node.inputs[k]];
      infos[k].dtype = v.dtype;
      infos[k].rank = int(v.dims.size());
      for (size_t d = 0; d < v.dims.size(); ++d) infos[k].shape[d] = v.dims[d];
      infos[k].constant = v.is_constant ? v.constant.data() : nullptr;
    }
    return kernels::cuda::prepare(node.op, node.attrs, infos) != nullptr;
  };
  for (const GraphSpec& graph : {affine_graph(), while_sum_graph()}) {
    auto program = load_ok(graph);
    ASSERT_NE(program, nullptr);
    for (const runtime::FunctionImpl& fn : runtime::program_impl(*program).functions)
      for (const runtime::NodeInfo& node : fn.nodes)
        if (node.kind == runtime::NodeKind::kOp) {
          EXPECT_TRUE(covers(fn, node)) << fn.name << ": " << node.op_name;
        }
  }
}

}  // namespace
}  // namespace sg::testing
