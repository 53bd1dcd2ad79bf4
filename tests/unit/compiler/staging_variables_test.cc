// Program variables (SPEC §12) assigned inside staged control flow: a variable is a
// local of the entry's run that starts at its value at the start of the run. Staged
// ifs join it, staged loops carry it, inlined helpers hand it back; the entry writes
// its final value. What is still refused is a located error.
#include <gtest/gtest.h>

#include <algorithm>

#include "staging_test_util.h"

namespace sg::compiler::testing {
namespace {

size_t count_kind(const ir::Function& f, ir::NodeKind kind) {
  size_t n = 0;
  for (const ir::Node& node : f.nodes) n += node.kind == kind;
  return n;
}

// The names of the variables an entry reads and writes, in the file's order.
std::string names(const StageResult& r, const std::vector<int32_t>& vars) {
  std::string out;
  for (int32_t v : vars) out += (out.empty() ? "" : ",") + r.ir->variables.at(size_t(v)).name;
  return out;
}

std::string errors_of(const std::string& text) {
  auto r = stage_source(text);
  EXPECT_FALSE(r.ir);
  return r.locations();
}

TEST(StagingVariables, AnIfJoinsAVariableAndABranchThatDoesNotAssignKeepsIt) {
  auto r = stage_source(R"(import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)), step=0, scale=2.0)

def bump(x):
    v.w = v.w + x
    v.step += 1

@sg.function
def f(x: sg.f32[2], t: sg.f32):
    if t > 0:
        bump(x)
    return v.w * v.scale
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  const ir::Function& f = r.function("f");
  EXPECT_EQ(count_kind(f, ir::NodeKind::kIf), 1u);
  EXPECT_EQ(names(r, r.entry("f").reads), "w,step,scale");
  EXPECT_EQ(names(r, r.entry("f").writes), "w,step");
  // The values written are the If's; the output reads the start of the run.
  ASSERT_EQ(f.results.size(), 3u);
  for (const ir::Node& n : f.nodes)
    if (n.kind == ir::NodeKind::kIf) {
      EXPECT_EQ(n.outputs.size(), 2u);
      for (size_t k = 1; k < 3; ++k)
        EXPECT_NE(std::find(n.outputs.begin(), n.outputs.end(), f.results[k]), n.outputs.end()) << k;
      EXPECT_EQ(std::find(n.outputs.begin(), n.outputs.end(), f.results[0]), n.outputs.end());
    }
}

TEST(StagingVariables, ALoopCarriesTheValuesAssignedInIt) {
  auto r = stage_source(R"(import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)), step=0)

@sg.function
def f(x: sg.f32[2], n: sg.i64):
    w, step = v.w, v.step
    while step < n:
        w = w * 0.5 + x
        step += 1
        v.w = w
        v.step = step
    return v.w
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  const ir::Function& f = r.function("f");
  EXPECT_EQ(count_kind(f, ir::NodeKind::kWhile), 1u);
  EXPECT_EQ(names(r, r.entry("f").writes), "w,step");
  ASSERT_EQ(f.results.size(), 3u);
  ASSERT_EQ(f.params.size(), 4u);
  EXPECT_EQ(f.results[0], f.params[2]);  // the output reads w at the start of the run
  for (const ir::Node& n : f.nodes) {
    if (n.kind != ir::NodeKind::kWhile) continue;
    for (size_t k = 1; k < 3; ++k)
      EXPECT_NE(std::find(n.outputs.begin(), n.outputs.end(), f.results[k]), n.outputs.end()) << k;
  }
}

TEST(StagingVariables, EveryReadSeesTheStartOfTheRunEvenAfterAnAssignment) {
  auto r = stage_source(R"(import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))

@sg.function
def f(x: sg.f32[2]):
    before = v.w
    v.w = x
    return before, v.w
)");
  ASSERT_TRUE(r.ir) << r.locations();
  const ir::Function& f = r.function("f");
  ASSERT_EQ(f.params.size(), 2u);
  ASSERT_EQ(f.results.size(), 3u);
  EXPECT_EQ(f.results[0], f.params[1]);  // the variable's parameter: its value at the start
  EXPECT_EQ(f.results[1], f.params[1]);  // still, after the assignment (SPEC §12)
  EXPECT_EQ(f.results[2], f.params[0]);  // what the entry writes: x
}

TEST(StagingVariablesErrors, AssignedInsideAStagedCall) {
  const std::string e = errors_of(R"(import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))

def down(x, n):
    if n > 0:
        v.w = x
        return down(x, n - 1)
    return x

@sg.function
def f(x: sg.f32[2], n: sg.i64):
    return down(x, n)
)");
  EXPECT_NE(e.find("7:9: error: variable 'w' is assigned inside a staged call (a recursive function, or an "
                   "@sg.function called from the entry); return the new value and assign it in the caller"),
            std::string::npos)
      << e;
}

TEST(StagingVariablesErrors, AssignedInsideAFunctionSgGradStages) {
  const std::string e = errors_of(R"(import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))

def loss(w, x):
    v.w = w
    return sg.sum(w * x)

@sg.function
def f(x: sg.f32[2]):
    return sg.grad(loss)(v.w, x)
)");
  EXPECT_NE(e.find("6:5: error: variable 'w' is assigned inside a function that sg.grad or another transform "
                   "stages"),
            std::string::npos)
      << e;
}

TEST(StagingVariablesErrors, AnotherShapeInsideALoop) {
  const std::string e = errors_of(R"(import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))

@sg.function
def f(x: sg.f32["N"], n: sg.i64):
    for i in range(n):
        v.w = x
    return x
)");
  EXPECT_NE(e.find("8:9: error: variable 'w' is f32[2]; the value assigned is f32[N]"), std::string::npos) << e;
}

TEST(StagingVariablesErrors, AnotherStructureInsideABranch) {
  const std::string e = errors_of(R"(import stagegraph as sg

v = sg.variables(pair=(sg.zeros((2,)), sg.zeros((2,))))

@sg.function
def g(x: sg.f32[2], t: sg.f32):
    if t > 0:
        v.pair = (x,)
    return x
)");
  EXPECT_NE(e.find("8:9: error: variable 'pair' holds 2 tensors; the value assigned has 1"), std::string::npos) << e;
}

TEST(StagingVariablesErrors, AnotherDtypeKindInsideABranch) {
  const std::string e = errors_of(R"(import stagegraph as sg

v = sg.variables(step=0)

@sg.function
def g(x: sg.f32[2], t: sg.f32):
    if t > 0:
        v.step = sg.sum(x)
    return x
)");
  EXPECT_NE(e.find("8:9: error: variable 'step' is i64[]; the value assigned is f32[]: cast it with astype"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace sg::compiler::testing
