// Staging of straight-line programs: entry signatures, symbolic dims, static
// evaluation at compile time, module constants, inlined helpers, results.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

int64_t constant_int(const ir::Module& m, const ir::Function& f, int32_t value) {
  const ir::Value& v = f.values.at(size_t(value));
  EXPECT_GE(v.constant, 0);
  const ir::Constant& c = m.constants.at(size_t(v.constant));
  EXPECT_EQ(c.dtype, DType::kI64);
  int64_t x = 0;
  std::memcpy(&x, c.bytes.data(), 8);
  return x;
}

TEST(Staging, MlpWithSymbolicBatch) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def mlp(x: sg.f32["N", 784], w1: sg.f32[784, 512], b1: sg.f32[512], w2: sg.f32[512, 10], b2: sg.f32[10]):
    h = sg.relu(x @ w1 + b1)
    return h @ w2 + b2
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("mlp"), "f32[N, 10]");
  const ir::Entry& e = r.entry("mlp");
  EXPECT_EQ(e.input_names, (std::vector<std::string>{"x", "w1", "b1", "w2", "b2"}));
  EXPECT_EQ(e.output_names, (std::vector<std::string>{"output_0"}));
  EXPECT_EQ(r.count_ops("mlp", ops::OpId::MatMul), 2u);
  EXPECT_EQ(r.count_ops("mlp", ops::OpId::Add), 2u);
  EXPECT_EQ(r.count_ops("mlp", ops::OpId::Relu), 1u);
  EXPECT_TRUE(r.ir->constants.empty());
  EXPECT_EQ(ir::verify(*r.ir), "");
  // The value bound to h carries its name.
  bool named = false;
  for (const ir::Value& v : r.function("mlp").values) named = named || v.name == "h";
  EXPECT_TRUE(named);
}

TEST(Staging, FibIsEvaluatedAtCompileTime) {
  auto r = stage_source(R"(import stagegraph as sg

def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

@sg.function
def f(x: sg.f32[3]):
    return fib(10)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  const ir::Function& f = r.function("f");
  EXPECT_TRUE(f.nodes.empty());
  ASSERT_EQ(f.results.size(), 1u);
  EXPECT_EQ(constant_int(*r.ir, f, f.results[0]), 55);
  EXPECT_EQ(r.result_type("f"), "i64[]");
}

TEST(Staging, DeepCompileTimeRecursionIsAnErrorNamingTheFunction) {
  auto r = stage_source(R"(import stagegraph as sg

def down(n):
    return down(n + 1)

@sg.function
def f(x: sg.f32[3]):
    return down(0)
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("recursion of 'down' goes deeper than 10000 calls"), std::string::npos)
      << r.locations();
}

TEST(Staging, ModuleConstantsBecomeDeduplicatedConstants) {
  auto r = stage_source(R"(import stagegraph as sg
from stagegraph import f32

HIDDEN = 4
SCALE = 0.5
BIAS = sg.arange(HIDDEN) * SCALE

@sg.function
def f(x: f32["N", HIDDEN]):
    """Docstring."""
    y = x + BIAS
    return y * BIAS
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[N, 4]");
  // BIAS is used twice: one constant, one value.
  ASSERT_EQ(r.ir->constants.size(), 1u);
  const ir::Constant& c = r.ir->constants[0];
  EXPECT_EQ(c.dtype, DType::kF32);
  EXPECT_EQ(c.shape, (std::vector<int64_t>{4}));
  float v[4];
  std::memcpy(v, c.bytes.data(), 16);
  EXPECT_FLOAT_EQ(v[3], 1.5f);
  int consts = 0;
  for (const ir::Value& val : r.function("f").values) consts += val.constant >= 0;
  EXPECT_EQ(consts, 1);
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(Staging, HelpersAreInlinedWithKeywordsAndDefaults) {
  auto r = stage_source(R"(import stagegraph as sg

def dense(x, w, b=None, act=True):
    y = x @ w
    if b is not None:
        y = y + b
    if act:
        y = sg.tanh(y)
    return y

@sg.function
def f(x: sg.f32["B", 8], w: sg.f32[8, 16], b: sg.f32[16], w2: sg.f32[16, 2]):
    h = dense(x, w, b)
    return dense(h, w=w2, act=False)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[B, 2]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::MatMul), 2u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::Add), 1u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::Tanh), 1u);
}

TEST(Staging, TupleAndDictResults) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def pair(x: sg.f32["N"]):
    return x + 1, 2.5

@sg.function
def named(x: sg.f32["N"]):
    return {"double": x * 2, "flag": True}
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.entry("pair").output_names, (std::vector<std::string>{"output_0", "output_1"}));
  EXPECT_EQ(r.result_type("pair", 0), "f32[N]");
  EXPECT_EQ(r.result_type("pair", 1), "f32[]");
  EXPECT_EQ(r.entry("named").output_names, (std::vector<std::string>{"double", "flag"}));
  EXPECT_EQ(r.result_type("named", 1), "bool[]");
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(Staging, EntriesOptionSelectsAndRejectsUnknownNames) {
  const std::string src = R"(import stagegraph as sg

@sg.function
def a(x: sg.f32[2]):
    return x

@sg.function
def b(x: sg.f32[2]):
    return -x

def helper(x: sg.f32[2]):
    return x
)";
  StageOptions only_b;
  only_b.entries = {"b"};
  auto r = stage_source(src, only_b);
  ASSERT_TRUE(r.ir) << r.locations();
  ASSERT_EQ(r.ir->entries.size(), 1u);
  EXPECT_EQ(r.ir->entries[0].name, "b");

  StageOptions unknown;
  unknown.entries = {"c"};
  auto bad = stage_source(src, unknown);
  EXPECT_FALSE(bad.ir);
  EXPECT_NE(bad.locations().find("unknown entry point 'c' (entry points: a, b)"), std::string::npos) << bad.locations();

  // Only @sg.function functions are entry points (SPEC §2); one named twice is exported once.
  StageOptions plain;
  plain.entries = {"helper"};
  auto undecorated = stage_source(src, plain);
  EXPECT_FALSE(undecorated.ir);
  EXPECT_NE(undecorated.locations().find("unknown entry point 'helper': 'helper' is not decorated with @sg.function"),
            std::string::npos) << undecorated.locations();
  StageOptions twice;
  twice.entries = {"a", "a"};
  auto once = stage_source(src, twice);
  ASSERT_TRUE(once.ir) << once.locations();
  EXPECT_EQ(once.ir->entries.size(), 1u);
}

TEST(Staging, ZerosStayASplatAndBecomeAFullNode) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[1000, 1000]):
    z = sg.zeros((1000, 1000)) + 1.0
    return x + z
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Full), 1u);
  size_t bytes = 0;
  for (const ir::Constant& c : r.ir->constants) bytes += c.bytes.size();
  EXPECT_LE(bytes, 4u);
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(Staging, StaticPrintListsAndComprehensions) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4]):
    sizes = [i * i for i in range(4) if i != 2]
    sizes.append(len(sizes))
    total = 0
    for i, s in enumerate(sizes):
        total += s
    print("sizes", sizes, total, 1.0, None, (1,))
    assert total == 13, "wrong total"
    return x * total
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed, "sizes [0, 1, 9, 3] 13 1.0 None (1,)\n");
  EXPECT_EQ(r.result_type("f"), "f32[4]");
}

TEST(Staging, ClosuresReadEnclosingVariables) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 3], w: sg.f32[3, 3]):
    def layer(h):
        return sg.relu(h @ w)
    for _ in range(3):
        x = layer(x)
    return x
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::MatMul), 3u);
  EXPECT_EQ(r.result_type("f"), "f32[N, 3]");
}

}  // namespace
}  // namespace sg::compiler
