// Classes, closures, raise and try (SPEC §4): what stages, and the refusals with
// their messages at their lines.
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

size_t count_asserts(const ir::Module& m, const std::string& message) {
  size_t n = 0;
  for (const ir::Function& f : m.functions)
    for (const ir::Node& node : f.nodes)
      if (node.kind == ir::NodeKind::kOp && node.op == ops::OpId::Assert && !node.attrs.values.empty() &&
          node.attrs.values[0].s == message)
        ++n;
  return n;
}

TEST(StagingLang, ClassesStageToPlainGraphs) {
  auto r = stage_source(R"(import stagegraph as sg

class Dense:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return sg.relu(x @ self.w)

@sg.function
def f(x: sg.f32["N", 4], w: sg.f32[4, 3]):
    return Dense(w)(x)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[N, 3]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::MatMul), 1u);
}

TEST(StagingLang, StaticRaiseIsACompileErrorWithTheProgramsMessage) {
  auto r = stage_source(R"(import stagegraph as sg

def check(n):
    if n < 0:
        raise ValueError("n must be non-negative, got " + str(n))
    return n

@sg.function
def f(x: sg.f32["N"]):
    return x * check(-2)
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(), "5:9: error: ValueError: n must be non-negative, got -2\n");
}

TEST(StagingLang, StagedRaiseIsARunTimeCheck) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], n: sg.i64):
    if n < 0:
        raise ValueError("n must be non-negative")
    else:
        y = x + 1.0
    return y
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(count_asserts(*r.ir, "ValueError: n must be non-negative"), 1u);
}

TEST(StagingLang, ExceptThatWouldCatchARunTimeRaiseIsRefused) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], n: sg.i64):
    try:
        if n < 0:
            raise ValueError("negative")
        y = x
    except ValueError:
        y = -x
    return y
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(),
            "7:13: error: this raise runs under a staged condition, so the ValueError happens at run time, but the "
            "except clause at line 9 would have to catch it; try/except works only where staging decides the "
            "outcome at compile time: test the condition and handle the error without raising\n"
            "  9:5: note: the except clause is here\n");
}

TEST(StagingLang, TryExceptFinallyDecidedAtCompileTime) {
  auto r = stage_source(R"(import stagegraph as sg

class Bad(ValueError):
    pass

@sg.function
def f(x: sg.f32["N"]):
    log = []
    try:
        log.append(1)
        raise Bad("b")
    except KeyError:
        log.append(2)
    except ValueError as e:
        log.append(str(e))
    else:
        log.append(3)
    finally:
        log.append(4)
    print(log)
    return x
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed, "[1, 'b', 4]\n");
}

TEST(StagingLang, GlobalAndNonlocalRefusals) {
  auto g = stage_source(R"(import stagegraph as sg

TOTAL = 0

@sg.function
def f(x: sg.f32["N"]):
    global TOTAL
    TOTAL = x.sum()
    return x
)");
  EXPECT_FALSE(g.ir);
  EXPECT_EQ(g.locations(), "8:5: error: global variable 'TOTAL' cannot hold a value known only at run time: a module "
                           "global is a compile-time constant; return the value instead\n");
  auto n = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], k: sg.i64):
    count = 0
    def bump():
        nonlocal count
        if k > 0:
            count = count + 1
    bump()
    return x * count
)");
  EXPECT_FALSE(n.ir);
  EXPECT_EQ(n.locations(), "9:13: error: nonlocal variable 'count' is rebound inside a staged branch or loop of the "
                           "function that declares it; its value after the branch or loop would depend on run-time "
                           "values: return the new value instead\n");
}

TEST(StagingLang, ClassRefusals) {
  auto nested = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"]):
    class A:
        pass
    return x
)");
  EXPECT_EQ(nested.locations(),
            "5:5: error: class 'A' is defined inside a function; define classes at module level\n");
  auto frozen = stage_source(R"(import stagegraph as sg
import collections

P = collections.namedtuple("P", "a b")

@sg.function
def f(x: sg.f32["N"]):
    p = P(x, 1)
    p.a = x + 1.0
    return p.a
)");
  EXPECT_EQ(frozen.locations(), "9:5: error: cannot assign to field 'a' of 'P': it is a named tuple; make a new one "
                                "with _replace or the constructor\n");
  auto in_loop = stage_source(R"(import stagegraph as sg

class C:
    pass

@sg.function
def f(x: sg.f32["N"], n: sg.i64):
    c = C()
    for i in range(n):
        c.total = x * i
    return c.total
)");
  EXPECT_EQ(in_loop.locations(),
            "9:5: error: attribute 'c.total' is first assigned inside the staged for loop at line 9; it would be "
            "undefined when the loop runs zero times: assign it before the loop\n");
  auto bases = stage_source(R"(import stagegraph as sg

class A:
    pass

class B:
    pass

class C(A, B):
    pass
)");
  EXPECT_EQ(bases.locations(),
            "9:12: error: class 'C' has more than one base class; only single inheritance is supported\n");
}

TEST(StagingLang, AttributesCarriedByStagedLoopsAndBranches) {
  auto r = stage_source(R"(import stagegraph as sg

class Acc:
    def __init__(self, x):
        self.total = x
        self.n = 0

    def add(self, v):
        self.total = self.total + v
        self.n += 1

@sg.function
def f(x: sg.f32["N"], k: sg.i64):
    a = Acc(x)
    for i in range(k):
        a.add(x)
    if k > 2:
        a.total = a.total * 2.0
    return a.total, a.n
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[N]");
  EXPECT_EQ(r.result_type("f", 1), "i64[]");
}

}  // namespace
}  // namespace sg::compiler
