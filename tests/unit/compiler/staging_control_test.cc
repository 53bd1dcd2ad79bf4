// Control flow in staging: static tests run at compile time (only the taken
// branch, loops unrolled); a staged `if` becomes an If node (SPEC §5).
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

TEST(StagingControl, StaticBranchesAndLoopsRunAtCompileTime) {
  auto r = stage_source(R"(import stagegraph as sg

DEPTH = 3

@sg.function
def f(x: sg.f32["N", 4], w: sg.f32[4, 4]):
    i = 0
    while True:
        if i == DEPTH:
            break
        x = x @ w
        i += 1
    for k in range(10):
        if k % 2 == 0:
            continue
        if k > 5:
            break
        x = x + k
    return x
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::MatMul), 3u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::Add), 3u);  // k = 1, 3, 5
  EXPECT_NE(r.explained.find("model.py:8:5: while: compile time"), std::string::npos) << r.explained;
}

TEST(StagingControl, StagedIfBecomesAnIfNode) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], w: sg.f32["N"], flag: sg.bool):
    y = x
    if flag:
        y = x * 2.0
        z = w
    else:
        z = sg.sqrt(w)
    return y + z
)");
  ASSERT_TRUE(r.ir) << r.locations();
  const ir::Function& f = r.function("f");
  size_t ifs = 0;
  for (const ir::Node& n : f.nodes) {
    if (n.kind != ir::NodeKind::kIf) continue;
    ++ifs;
    EXPECT_EQ(n.outputs.size(), 2u);  // y and z
    EXPECT_EQ(n.functions.size(), 2u);
    const ir::Function& then_fn = r.ir->functions.at(size_t(n.functions[0]));
    const ir::Function& else_fn = r.ir->functions.at(size_t(n.functions[1]));
    EXPECT_EQ(then_fn.params.size(), else_fn.params.size());
    EXPECT_EQ(then_fn.params.size() + 1, n.inputs.size());
  }
  EXPECT_EQ(ifs, 1u);
  EXPECT_EQ(r.result_type("f"), "f32[N]");
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  EXPECT_NE(r.explained.find("if: staged"), std::string::npos);
}

TEST(StagingControl, StagedIfJoinsDifferingDimsIntoANewSymbol) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4], c: sg.f32):
    if c > 0:
        y = x[:2]
    else:
        y = x[1:]
    return y
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[y#1]");
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
}

TEST(StagingControl, VariableFromOneBranchIsAnErrorWhenRead) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4], c: sg.bool):
    if c:
        t = x + 1.0
    return t
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("7:12: error: variable 't' is assigned in only one branch of the staged `if` at "
                               "line 5: it is not defined after the else branch runs"),
            std::string::npos) << r.locations();
}

TEST(StagingControl, NonScalarStagedTestSuggestsAnyAll) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"]):
    if x > 0:
        x = -x
    return x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("5:8: error: the test of a staged `if` must be a scalar, got bool[N]; use sg.any or "
                               "sg.all"),
            std::string::npos) << r.locations();
}

}  // namespace
}  // namespace sg::compiler

namespace sg::compiler {
namespace {

using testing::stage_source;

TEST(StagingControl, AppendingToAListInAStagedIfIsAnError) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], c: sg.bool):
    xs = []
    if c:
        xs.append(x)
    return x
)");
  EXPECT_FALSE(r.ir);
  // Reported at the append, not at the if.
  EXPECT_NE(r.locations().find("7:9: error: list 'xs' is changed in the then branch of this staged `if`"),
            std::string::npos) << r.locations();
}

TEST(StagingControl, ExtendingAListInAStagedElseIsReportedAtTheStatement) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], c: sg.bool):
    xs = [x]
    if c:
        y = x + 1.0
    else:
        y = x
        xs += [y]
    return y
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("10:9: error: list 'xs' is changed in the else branch of this staged `if`"),
            std::string::npos) << r.locations();
}

TEST(StagingControl, StaticValuesEqualInBothBranchesStayStatic) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], c: sg.bool):
    if c:
        k = 2
        y = x
    else:
        k = 2
        y = -x
    for _ in range(k):
        y = y * 2.0
    return y
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Mul), 2u);
}

TEST(StagingControl, LargeStaticResultsStayNodes) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[1024, 1024]):
    row = sg.arange(1024).astype(sg.f32)
    return x + sg.broadcast_to(row, (1024, 1024))
)");
  ASSERT_TRUE(r.ir) << r.locations();
  // Folding would put 4 MiB in the file for 4 KiB of input: it stays a node.
  EXPECT_EQ(r.count_ops("f", ops::OpId::BroadcastTo), 1u);
  size_t bytes = 0;
  for (const ir::Constant& c : r.ir->constants) bytes += c.bytes.size();
  EXPECT_EQ(bytes, 1024u * 4u);
}

}  // namespace
}  // namespace sg::compiler
