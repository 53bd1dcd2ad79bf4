// SPEC §8's warning on a staged value whose shape depends on a loop that can
// run zero times and is then read: what a staged loop grows from empty (a list
// appended to, a relaxed dim that starts at 0) is empty again when the loop
// runs zero times, so reading an element of it then fails, as it does in eager
// mode. Golden diagnostics, and the cases that must stay quiet.
#include <gtest/gtest.h>

#include <string>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;
using testing::StageResult;

// Every diagnostic as the tools print it (gcc style, with the source line).
std::string printed(const StageResult& r) {
  std::string out;
  for (const Diagnostic& d : r.diags->diagnostics()) out += r.diags->format(d);
  return out;
}

TEST(ZeroTripLoops, ReadingAListTheLoopFillsFromEmptyWarnsOnce) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(xs: sg.f32["T", 4], w: sg.f32[4, 4]):
    h = sg.zeros((4,))
    outs = []
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ w + h)
        outs.append(h)
    first = outs[0]
    return first, sg.stack(outs)[-1]
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(printed(r),
            "model.py:10:13: warning: indexing 'outs', which the staged for loop at line 7 grows from empty: it is "
            "empty when that loop runs zero times, and this index is then out of range (in eager mode too)\n"
            "        first = outs[0]\n"
            "                ^~~~~~~\n"
            "model.py:10:13: note: start 'outs' with an item before the loop, or read it only where the loop ran (under a staged "
            "test of its length)\n");
}

// An empty list stacks to the empty stack of its items' type, as in eager mode: no warning.
TEST(ZeroTripLoops, StackingAListTheLoopFillsFromEmptyIsQuiet) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(xs: sg.f32["T", 4], n: sg.i64):
    outs = []
    i = 0
    while i < n:
        outs.append(xs[0] * 2.0)
        i = i + 1
    return sg.stack(outs)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.locations(), "");
  EXPECT_EQ(r.result_type("f"), "f32[outs#1, 4]");
}

TEST(ZeroTripLoops, ARelaxedDimThatStartsAtZeroWarnsWhenIndexed) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"]):
    kept = sg.relax(sg.zeros((0,)), "K", 0)
    for i in sg.range(len(x)):
        kept = sg.concatenate([kept, x[i:i + 1]])
    return kept[-1]
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_NE(r.locations().find("8:12: warning: indexing 'kept', which the staged for loop at line 6 grows from empty"),
            std::string::npos)
      << r.locations();
  EXPECT_EQ(r.diags->diagnostics().size(), 1u) << r.locations();
}

TEST(ZeroTripLoops, NoWarningWhereTheReadCannotMeetAnEmptyValue) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(xs: sg.f32["T", 4], n: sg.i64):
    seeded = [xs[0]]
    for t in range(xs.shape[0]):
        seeded.append(xs[t])
    fixed = []
    for i in sg.range(3):
        fixed.append(xs[0] * 2.0)
    more = []
    for i in range(len(xs) + 1):
        more.append(xs[0])
    ones = sg.relax(sg.ones((1,)), "L", 0)
    for i in sg.range(n):
        ones = sg.concatenate([ones, ones])
    maybe = []
    for i in sg.range(n):
        maybe.append(xs[0])
    if len(maybe) > 0:
        last = maybe[-1]
    else:
        last = xs[0]
    kept = sg.relax(sg.zeros((0,)), "K", 0)
    for i in sg.range(n):
        kept = sg.concatenate([kept, xs[0, :1]])
    return seeded[-1], sg.stack(fixed)[0], more[0], ones[0], last, kept, len(maybe)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.locations(), "");
}

TEST(ZeroTripLoops, AValueFirstDefinedInTheLoopIsCheckedWhereRead) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(xs: sg.f32["T", 4]):
    for t in range(xs.shape[0]):
        y = xs[t] * 2.0
    return y
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u);
  EXPECT_EQ(r.result_type("f"), "f32[4]");
}

}  // namespace
}  // namespace sg::compiler
