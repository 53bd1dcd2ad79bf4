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

// As in Python, reading it fails only on the path that did not assign it: a
// run-time check of its defined flag (an Assert at the read).
TEST(StagingControl, VariableFromOneBranchIsCheckedWhenRead) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4], c: sg.bool):
    if c:
        t = x + 1.0
    return t
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u);
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  // Not read after the `if`: no check.
  auto unread = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4], c: sg.bool):
    if c:
        t = x + 1.0
    return x
)");
  ASSERT_TRUE(unread.ir) << unread.locations();
  EXPECT_EQ(unread.count_ops("f", ops::OpId::Assert), 0u);
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
  // Reported at the append, with the if as a note.
  EXPECT_NE(r.locations().find("7:9: error: list 'xs' has 1 item in the then branch of the staged `if` at line 6 and "
                               "0 items in the else branch"),
            std::string::npos) << r.locations();
  EXPECT_NE(r.locations().find("6:5: note: the staged `if`"), std::string::npos) << r.locations();
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
  EXPECT_NE(r.locations().find("10:9: error: list 'xs' has 1 item in the then branch of the staged `if` at line 6 and "
                               "2 items in the else branch"),
            std::string::npos) << r.locations();
}

TEST(StagingControl, ListAndDictItemsChangedInABranchJoinAsIfOutputs) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], c: sg.bool):
    xs = [x, x]
    d = {"h": x}
    if c:
        xs[0] = x + 1.0
        d["h"] = x * 2.0
    return xs[0] + xs[1] + d["h"]
)");
  ASSERT_TRUE(r.ir) << r.locations();
  const ir::Function& main = r.ir->functions[0];
  const ir::Node* if_node = nullptr;
  for (const ir::Node& n : main.nodes)
    if (n.kind == ir::NodeKind::kIf) if_node = &n;
  ASSERT_NE(if_node, nullptr);
  // xs[1] is unchanged on both paths: only xs[0] and d["h"] leave the If.
  EXPECT_EQ(if_node->outputs.size(), 2u);
}

TEST(StagingControl, AVariableMissingOnlyOnAPathThatReturnsIsDefinedAfter) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], k: sg.i64):
    if k == 0:
        y = x
    elif k == 1:
        return x * 3.0
    else:
        y = -x
    return y + 1.0
)");
  EXPECT_TRUE(r.ir) << r.locations();
  // Without the return, the same program reads an undefined y.
  auto bad = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], k: sg.i64):
    if k == 0:
        y = x
    elif k == 1:
        z = x * 3.0
    else:
        y = -x
    return y + 1.0
)");
  ASSERT_TRUE(bad.ir) << bad.locations();
  EXPECT_EQ(bad.count_ops("f", ops::OpId::Assert), 1u);
  // After a continue the variable may still be read after the loop, where eager
  // mode finds it undefined when every iteration continued: checked at run time.
  auto after_loop = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], k: sg.i64):
    for i in range(2):
        if k > i:
            continue
        else:
            w = x * 2.0
    return w
)");
  ASSERT_TRUE(after_loop.ir) << after_loop.locations();
  EXPECT_EQ(after_loop.count_ops("f", ops::OpId::Assert), 1u);
}

TEST(StagingControl, FStringsFormatStaticValuesAsPythonDoes) {
  auto r = stage_source(R"(import stagegraph as sg

RATE = 0.125

@sg.function
def f(x: sg.f32[2]):
    n = 3
    print(f"n={n:03d} rate={RATE:.2f} {RATE:>9.2e}|{'ab':^6}|{{}} {1234567:,} {255:#x} {-7:+} {0.5:%} {n=}")
    out = {}
    for i in range(2):
        out[f"y{i}"] = x * float(i)
    return out
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed, "n=003 rate=0.12  1.25e-01|  ab  |{} 1,234,567 0xff -7 50.000000% n=3\n");
  EXPECT_EQ(r.ir->entries[0].output_names, (std::vector<std::string>{"y0", "y1"}));
}

TEST(StagingControl, AnFStringOfStagedValuesBecomesAPrintFormat) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], n: sg.i64):
    print(f"{{n}} is {n}, x is {x!r}", "k")
    return x
)");
  ASSERT_TRUE(r.ir) << r.locations();
  const ir::Node* print = nullptr;
  for (const ir::Node& node : r.ir->functions[0].nodes)
    if (node.op == ops::OpId::Print) print = &node;
  ASSERT_NE(print, nullptr);
  EXPECT_EQ(print->attrs.values[0].s, "{{n}} is {}, x is {} k");
  EXPECT_EQ(print->inputs.size(), 2u);

  auto bad = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], n: sg.i64):
    print(f"{n:.2f}")
    s = f"{n}" + "!"
    return x
)");
  EXPECT_FALSE(bad.ir);
  EXPECT_NE(bad.locations().find("5:14: error: f-string: the format spec ':.2f' of a value known only at run time is "
                                 "not supported"),
            std::string::npos) << bad.locations();
}

TEST(StagingControl, AStagedValueKeptInAModuleListPastItsFunctionIsAnErrorAtItsUse) {
  auto r = stage_source(R"(import stagegraph as sg

SEEN = []

@sg.function
def f(x: sg.f32[2]):
    SEEN.append(x * 2.0)
    return x

@sg.function
def g(x: sg.f32[2]):
    return SEEN[0] + x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("12:20: error: this value was computed while staging 'f' and kept (in a module-level "
                               "list or dict) past it"),
            std::string::npos) << r.locations();
  EXPECT_NE(r.locations().find("7:19: note: it was computed here"), std::string::npos) << r.locations();
}

TEST(StagingControl, ADictThatGainsAKeyOnOnePathIsAnError) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], c: sg.bool):
    d = {"h": x}
    if c:
        d["extra"] = x
    return d["h"]
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("7:9: error: dict 'd' has keys ['h', 'extra'] in the then branch of the staged `if` at "
                               "line 6 and keys ['h'] in the else branch; both paths must leave it with the same keys "
                               "in the same order"),
            std::string::npos) << r.locations();
}

TEST(StagingControl, AListItemOfAnotherDtypeOnOnePathIsAnError) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], c: sg.bool):
    xs = [x]
    if c:
        xs[0] = x.astype(sg.i32)
    return xs[0]
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("6:5: error: item 0 of list 'xs' is i32 in the then branch and f32 in the else branch"),
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
