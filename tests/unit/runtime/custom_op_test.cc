// Custom ops (stagegraph/custom_op.h): a graph with a `custom` node runs the kernel
// the application registered under its name, with the recorded result shape
// (symbolic dims included); a graph whose custom op has no kernel is refused by
// Session::create, naming the op; a kernel's error ends the run naming the op.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ops/op_table.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// def f(x: f32["N", 3]): return my_ns.swish(x) + 1, the custom node's result
// f32[N, 3] with N the dynamic dim input shape_dim(x, 0).
GraphSpec swish_graph(const std::string& op_name = "my_ns.swish") {
  GraphSpec g;
  g.symbols = {"N"};
  const int32_t one = g.add_constant<float>({1.0f});
  FunctionSpec f;
  f.name = "f";
  const uint32_t x = f.param(DType::kF32, {sym(0), {3, -1}});
  const uint32_t n = f.op("shape_dim", {x}, DType::kI64, {}, 2, 5);
  f.nodes.back().attrs = {{"axis", ops::AttrValue::Int(0)}};
  const uint32_t y = f.op("custom", {x, n}, DType::kF32, {sym(0), {3, -1}}, 2, 12);
  f.nodes.back().attrs = {{"shape", ops::AttrValue::Ints({ops::attr::kDynamicDim, 3})},
                          {"dtype", ops::AttrValue::Int(int64_t(DType::kF32))},
                          {"name", ops::AttrValue::String(op_name)},
                          {"operands", ops::AttrValue::Int(1)}};
  const uint32_t k1 = f.value(DType::kF32, {}, one);
  const uint32_t z = f.op("add", {y, k1}, DType::kF32, {sym(0), {3, -1}}, 2, 20);
  f.results = {z};
  g.add_entry("f", g.add_function(std::move(f)), {"x"}, {"output_0"});
  return g;
}

// swish_graph's f as a callee: def g(x): return f(x) (a Call at line 7), beside
// def plain(x: f32["N", 3]): return x + 1, which reaches no custom op.
GraphSpec two_entries_graph() {
  GraphSpec g = swish_graph();
  const int32_t one = g.add_constant<float>({1.0f});
  FunctionSpec caller;
  caller.name = "g";
  {
    const uint32_t x = caller.param(DType::kF32, {sym(0), {3, -1}});
    caller.results = caller.control(fb::NodeKind::Call, {0}, {x}, {{DType::kF32, {sym(0), {3, -1}}}}, 7);
  }
  g.add_entry("g", g.add_function(std::move(caller)), {"x"}, {"output_0"});
  FunctionSpec plain;
  plain.name = "plain";
  {
    const uint32_t x = plain.param(DType::kF32, {sym(0), {3, -1}});
    const uint32_t k1 = plain.value(DType::kF32, {}, one);
    plain.results = {plain.op("add", {x, k1}, DType::kF32, {sym(0), {3, -1}}, 9, 12)};
  }
  g.add_entry("plain", g.add_function(std::move(plain)), {"x"}, {"output_0"});
  return g;
}

struct Calls {
  int count = 0;
  int64_t last_rows = -1;
};

Status swish(void* user, const CustomOpTensor* in, size_t n, const CustomOpTensor* out) {
  auto* calls = static_cast<Calls*>(user);
  ++calls->count;
  if (n != 1 || in[0].dtype != DType::kF32 || out->dtype != DType::kF32 || out->numel() != in[0].numel())
    return invalid_argument("unexpected operands");
  calls->last_rows = out->shape[0];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out->data);
  for (int64_t i = 0; i < out->numel(); ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
  return Status::Ok();
}

// Fails with the Status `user` points to.
Status failing(void* user, const CustomOpTensor*, size_t, const CustomOpTensor*) {
  return *static_cast<const Status*>(user);
}

TEST(CustomOp, RegisteredKernelRuns) {
  CustomOps ops;
  Calls calls;
  ASSERT_TRUE(ops.add("my_ns.swish", &swish, &calls).ok());
  SessionOptions options;
  options.custom_ops = &ops;
  auto program = load_ok(swish_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "f", options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  Session& session = **s;
  for (int64_t rows : {2, 0, 1}) {
    std::vector<float> xs;
    for (int64_t i = 0; i < rows * 3; ++i) xs.push_back(float(i) - 2.5f);
    ASSERT_TRUE(session.set_input("x", make_tensor<float>(DType::kF32, {rows, 3}, xs)).ok());
    const Status st = session.run();
    ASSERT_TRUE(st.ok()) << st.message();
    const Tensor y = session.output(0).value();
    ASSERT_EQ(y.dim(0), rows);
    const std::vector<float> got = values_of<float>(y);
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_FLOAT_EQ(got[i], xs[i] / (1.0f + std::exp(-xs[i])) + 1.0f) << i;
    EXPECT_EQ(calls.last_rows, rows);
  }
  EXPECT_EQ(calls.count, 3);
}

TEST(CustomOp, UnregisteredOpIsRefusedOnSessionCreation) {
  auto program = load_ok(swish_graph());
  ASSERT_NE(program, nullptr);
  auto none = Session::create(program, "f");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(none.status().message(),
            "model.py:2:12: entry 'f' uses custom op 'my_ns.swish', which has no registered kernel "
            "(SessionOptions::custom_ops is not set)");

  CustomOps other;
  ASSERT_TRUE(other.add("my_ns.gelu", &swish).ok());
  SessionOptions options;
  options.custom_ops = &other;
  auto wrong = Session::create(program, "f", options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("'my_ns.swish'"), std::string::npos) << wrong.status().message();
}

// The kernel's code ends the run as it returned it (custom_op.h), with its message
// after the op's name and source line.
// Kernels are needed for the custom ops an entry reaches, through Call, If and
// While too; ops only other entries reach need none.
TEST(CustomOp, OnlyTheOpsAnEntryReachesNeedKernels) {
  auto program = load_ok(two_entries_graph());
  ASSERT_NE(program, nullptr);
  auto plain = Session::create(program, "plain");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE((*plain)->set_input("x", make_tensor<float>(DType::kF32, {1, 3}, {1, 2, 3})).ok());
  ASSERT_TRUE((*plain)->run().ok());
  EXPECT_EQ(values_of<float>((*plain)->output(0)), (std::vector<float>{2, 3, 4}));
  for (const char* entry : {"f", "g"}) {
    auto refused = Session::create(program, entry);
    ASSERT_FALSE(refused.ok()) << entry;
    EXPECT_NE(refused.status().message().find(std::string("entry '") + entry + "' uses custom op 'my_ns.swish'"),
              std::string::npos)
        << refused.status().message();
  }
  CustomOps ops;
  Calls calls;
  ASSERT_TRUE(ops.add("my_ns.swish", &swish, &calls).ok());
  SessionOptions options;
  options.custom_ops = &ops;
  auto called = Session::create(program, "g", options);
  ASSERT_TRUE(called.ok()) << called.status().message();
  ASSERT_TRUE((*called)->set_input("x", make_tensor<float>(DType::kF32, {1, 3}, {0, 0, 0})).ok());
  ASSERT_TRUE((*called)->run().ok());
  EXPECT_EQ(calls.count, 1);
}

// Writes the first item of its output only.
Status first_item_only(void*, const CustomOpTensor* in, size_t, const CustomOpTensor* out) {
  if (out->numel() > 0) static_cast<float*>(out->data)[0] = static_cast<const float*>(in[0].data)[0];
  return Status::Ok();
}

// A kernel that makes fewer items than its output holds leaves zeros (the output
// comes zero-filled), never the bytes of an earlier value.
TEST(CustomOp, OutputComesZeroFilled) {
  CustomOps ops;
  ASSERT_TRUE(ops.add("my_ns.swish", &first_item_only).ok());
  SessionOptions options;
  options.custom_ops = &ops;
  auto s = Session::create(load_ok(swish_graph()), "f", options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {2, 3}, {7, 8, 9, 10, 11, 12})).ok());
    ASSERT_TRUE((*s)->run().ok());
    EXPECT_EQ(values_of<float>((*s)->output(0)), (std::vector<float>{8, 1, 1, 1, 1, 1})) << round;
  }
}

TEST(CustomOp, KernelErrorEndsTheRunWithItsOwnCode) {
  for (const StatusCode code : {StatusCode::kRuntimeError, StatusCode::kInvalidInput, StatusCode::kOutOfMemory,
                                StatusCode::kInvalidArgument, StatusCode::kUnsupported}) {
    Status returned(code, "the device is on fire");
    CustomOps ops;
    ASSERT_TRUE(ops.add("my_ns.swish", &failing, &returned).ok());
    SessionOptions options;
    options.custom_ops = &ops;
    auto s = Session::create(load_ok(swish_graph()), "f", options);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {1, 3}, {1, 2, 3})).ok());
    const Status st = (*s)->run();
    EXPECT_EQ(st.code(), code) << st.message();
    EXPECT_EQ(st.message().rfind("model.py:2:12: ", 0), 0u) << st.message();
    EXPECT_NE(st.message().find("custom op 'my_ns.swish': the device is on fire"), std::string::npos) << st.message();
    // The Session stays usable.
    returned = Status::Ok();
    EXPECT_TRUE((*s)->run().ok());
  }
}

TEST(CustomOp, RegistryRejectsBadEntries) {
  CustomOps ops;
  EXPECT_EQ(ops.add("", &swish).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ops.add("a.b", nullptr).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(ops.add("a.b", &swish).ok());
  const Status dup = ops.add("a.b", &swish);
  EXPECT_EQ(dup.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.message().find("already registered"), std::string::npos);
  EXPECT_EQ(ops.size(), 1u);
  ASSERT_NE(ops.find("a.b"), nullptr);
  EXPECT_EQ(ops.find("a.b")->kernel, &swish);
  EXPECT_EQ(ops.find("a.c"), nullptr);
}

TEST(CustomOp, MalformedNodeIsRefusedOnLoad) {
  const std::vector<uint8_t> bytes = build_sgraph(swish_graph(""));
  const auto p = load_owned(bytes);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("custom: the name must not be empty"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace sg::testing
