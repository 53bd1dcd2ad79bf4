// Placement of nodes on a GPU (runtime/src/placement.h), with the GPU's coverage
// given by a predicate: where nodes run, which loops stay on the device and why
// the others do not, and the copies between host and device memory.
#include "placement.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

using runtime::Device;
using runtime::FunctionImpl;
using runtime::NodeInfo;

runtime::CoversFn all_but(std::set<std::string> cpu_ops) {
  return [cpu_ops](const FunctionImpl&, const NodeInfo& node) { return cpu_ops.count(node.op_name) == 0; };
}

TEST(Placement, ALoopWhoseNodesAllRunOnTheGpuStaysThere) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  const runtime::ProgramPlacement p = runtime::place(runtime::program_impl(*program), all_but({}));
  ASSERT_EQ(p.functions.size(), 3u);
  const runtime::FunctionPlacement& main = p.functions[0];
  ASSERT_EQ(main.nodes.size(), 1u);
  EXPECT_TRUE(main.nodes[0].device_control);
  EXPECT_EQ(main.nodes[0].device, Device::kGpu);
  EXPECT_TRUE(p.functions[1].device_function);
  EXPECT_TRUE(p.functions[2].device_function);
  // The loop's constants are uploaded with the Session; no copy per run inside.
  EXPECT_EQ(p.functions[1].transfers + p.functions[2].transfers, 0u);
}

TEST(Placement, ALoopWithACpuNodeIsHostDrivenAndSaysWhy) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  const runtime::ProgramPlacement p = runtime::place(runtime::program_impl(*program), all_but({"less"}));
  const runtime::NodePlacement& loop = p.functions[0].nodes[0];
  EXPECT_FALSE(loop.device_control);
  EXPECT_EQ(loop.device, Device::kCpu);
  EXPECT_NE(loop.reason.find("total_cond"), std::string::npos) << loop.reason;
  EXPECT_NE(loop.reason.find("less"), std::string::npos) << loop.reason;
  EXPECT_NE(loop.reason.find(":3:11"), std::string::npos) << "names the source line: " << loop.reason;
  // The body still runs its adds on the GPU, between host-held parameters and
  // results: (i, s) up, (i + 1, s + i) and n down.
  const runtime::FunctionPlacement& body = p.functions[2];
  EXPECT_FALSE(body.device_function);
  for (const runtime::NodePlacement& n : body.nodes) EXPECT_EQ(n.device, Device::kGpu);
  EXPECT_EQ(body.nodes[0].before.size(), 2u);  // s and i to the device
  EXPECT_EQ(body.results.size(), 2u);          // i + 1 and s + i back to the host
  EXPECT_EQ(body.transfers, 4u);
}

TEST(Placement, RecursionIsHostDriven) {
  auto program = load_ok(recursive_graph("mul", 1, 1));
  ASSERT_NE(program, nullptr);
  const runtime::ProgramPlacement p = runtime::place(runtime::program_impl(*program), all_but({}));
  EXPECT_FALSE(p.functions[0].device_function);
  EXPECT_FALSE(p.functions[2].device_function);
  EXPECT_NE(p.functions[2].reason.find("call"), std::string::npos) << p.functions[2].reason;
  const runtime::NodePlacement& branch = p.functions[0].nodes[1];
  EXPECT_FALSE(branch.device_control);
  // The base case holds nothing the GPU lacks, but the host-driven If enters it.
  EXPECT_FALSE(p.functions[1].device_function);
  EXPECT_NE(p.functions[1].reason.find("entered from the host"), std::string::npos) << p.functions[1].reason;
}

TEST(Placement, EachValueIsCopiedOnceToEachDeviceThatReadsIt) {
  auto program = load_ok(pair_graph());
  ASSERT_NE(program, nullptr);
  // x + y on the CPU, then (x + y) + z on the GPU: one upload of the sum and of z.
  runtime::CoversFn second_add_only = [](const FunctionImpl& fn, const NodeInfo& node) {
    return &node == &fn.nodes[1];
  };
  const runtime::ProgramPlacement p = runtime::place(runtime::program_impl(*program), second_add_only);
  const runtime::FunctionPlacement& f = p.functions[0];
  EXPECT_FALSE(f.device_function);
  EXPECT_EQ(f.nodes[0].device, Device::kCpu);
  EXPECT_TRUE(f.nodes[0].before.empty());
  EXPECT_EQ(f.nodes[1].device, Device::kGpu);
  EXPECT_EQ(f.nodes[1].before.size(), 2u);
  EXPECT_EQ(f.results.size(), 1u);
  EXPECT_EQ(f.transfers, 3u);
  // Everything on the GPU: the entry is a device function; its inputs and result
  // cross once per run, made by the Session, not inside.
  const runtime::ProgramPlacement all = runtime::place(runtime::program_impl(*program), all_but({}));
  EXPECT_TRUE(all.functions[0].device_function);
  EXPECT_EQ(all.functions[0].transfers, 0u);
}

}  // namespace
}  // namespace sg::testing
