// Staging diagnostics: errors at exact line:col with provenance notes (SPEC §8).
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

TEST(StagingErrors, MatmulInnerMismatchWithProvenance) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 784], w: sg.f32[512, 10]):
    h = x @ w
    return h
)");
  EXPECT_FALSE(r.ir);
  // At the operator (SPEC §8's LINE:COL is where the problem is): the `@`.
  EXPECT_EQ(r.locations(),
            "5:11: error: matmul: inner dimensions differ: [N, 784] @ [512, 10]\n"
            "  4:10: note: x declared as f32[N, 784] here\n"
            "  4:31: note: w declared as f32[512, 10] here\n");
  ASSERT_FALSE(r.diags->diagnostics().empty());
  EXPECT_EQ(r.diags->format(r.diags->diagnostics()[0]),
            "model.py:5:11: error: matmul: inner dimensions differ: [N, 784] @ [512, 10]\n"
            "        h = x @ w\n"
            "            ~~^~~\n"
            "model.py:4:10: note: x declared as f32[N, 784] here\n"
            "    def f(x: sg.f32[\"N\", 784], w: sg.f32[512, 10]):\n"
            "             ^~~~~~~~~~~~~~~~\n"
            "model.py:4:31: note: w declared as f32[512, 10] here\n"
            "    def f(x: sg.f32[\"N\", 784], w: sg.f32[512, 10]):\n"
            "                                  ^~~~~~~~~~~~~~~\n");
}

// A method NumPy's arrays do not have is an error (eager mode's Tensor lacks it
// too), as is a dot whose inner dims differ, named as dot, not as its matmul.
TEST(StagingErrors, TensorMethodsAndDotOfStacks) {
  auto method = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 4]):
    return x.softmax()
)");
  EXPECT_FALSE(method.ir);
  EXPECT_EQ(method.locations(), "5:12: error: tensors have no attribute 'softmax'\n");
  auto dot = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 4], ws: sg.f32[2, 3, 5]):
    return sg.dot(x, ws)
)");
  EXPECT_FALSE(dot.ir);
  EXPECT_EQ(dot.locations(),
            "5:12: error: dot: shapes f32[N, 4] and f32[2, 3, 5] are not aligned: the last dim of the first and the "
            "second-to-last of the second differ\n");
}

TEST(StagingErrors, AugmentedAssignmentAndComparisonPointAtTheirOperators) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 4], w: sg.f32[3, 4], v: sg.f32[5]):
    h = x
    h @= w
    return h

@sg.function
def g(x: sg.f32["N", 4], v: sg.f32[5]):
    return x + 1.0 < v
)");
  EXPECT_FALSE(r.ir);
  const std::string l = r.locations();
  EXPECT_NE(l.find("6:7: error: matmul: inner dimensions differ: [N, 4] @ [3, 4]"), std::string::npos) << l;
  EXPECT_NE(l.find("11:20: error: less: cannot broadcast [N, 4] with [5]"), std::string::npos) << l;
}

TEST(StagingErrors, MismatchNotesNameTheProducingOp) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 784], w1: sg.f32[784, 512], w2: sg.f32[10, 512]):
    h = x @ w1
    return h @ w2
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(),
            "6:14: error: matmul: inner dimensions differ: [N, 512] @ [10, 512]\n"
            "  5:11: note: `x @ w1` produced f32[N, 512] here\n"
            "  4:54: note: w2 declared as f32[10, 512] here\n"
            "  0:0: note: the inner dims match if the right operand is transposed: use `.T` or "
            "sg.transpose on it\n");
}

TEST(StagingErrors, BadImportNamesTheLine) {
  auto r = stage_source(R"(import stagegraph as sg
import numpy as np

@sg.function
def f(x: sg.f32[2]):
    return x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(),
            "2:8: error: import of module 'numpy' at line 2 is not supported: a staged program may "
            "import only stagegraph, math (and collections, typing and dataclasses for records)\n");
}

TEST(StagingErrors, IntOfAStagedValue) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2]):
    n = int(x[0])
    return x * n
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(), "5:9: error: int(): value is only known at run time\n");
}

TEST(StagingErrors, MissingAndBadAnnotations) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x, y: sg.f32[2]):
    return y

@sg.function
def g(x: 3):
    return x

@sg.function
def h(x: sg.f32[2.5]):
    return x
)");
  EXPECT_FALSE(r.ir);
  const std::string l = r.locations();
  EXPECT_NE(l.find("4:7: error: parameter 'x' of an entry point needs a type annotation"), std::string::npos) << l;
  EXPECT_NE(l.find("8:10: error: the annotation of parameter 'x' must be a dtype with dims"), std::string::npos) << l;
  EXPECT_NE(l.find("12:17: error: a dim in a type annotation must be a non-negative int or a string, got 2.5"),
            std::string::npos) << l;
}

TEST(StagingErrors, DifferentDtypesAskForAstype) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2], i: sg.i32[2]):
    return x + i
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("5:14: error: add: operands have different dtypes f32 and i32; cast one with astype"),
            std::string::npos) << r.locations();
}

TEST(StagingErrors, ReductionBroadcastMismatchSuggestsKeepdims) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[3, 4]):
    m = sg.sum(x, axis=1)
    return x - m
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("keepdims=True"), std::string::npos) << r.locations();
}

TEST(StagingErrors, UnrollLimitSuggestsSgRange) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2]):
    i = 0
    while i < 1000000:
        i += 1
    return x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("6:5: error: this loop runs more than 100000 iterations at compile time; use sg.range"),
            std::string::npos) << r.locations();
}

// Each loop stays under its own limit; together they multiply. The budget of
// compile-time work in all stops them where it runs out: here at a call.
TEST(StagingErrors, CompileTimeStepBudgetStopsNestedLoops) {
  const std::string program = R"(import stagegraph as sg

def count(n):
    return n + 1

@sg.function
def f(x: sg.f32[2]):
    s = 0
    for i in range(100):
        for j in range(100):
            s = count(s)
    return x + s
)";
  StageOptions options;
  options.max_compile_time_steps = 5000;
  auto r = stage_source(program, options);
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("11:17: error: compile-time evaluation runs past 5000 steps (unrolled loop iterations "
                               "and Python-level calls, in all)"),
            std::string::npos)
      << r.locations();
  options.max_compile_time_steps = 100 + 100 * 100 * 2;  // the loops' iterations and the calls
  EXPECT_TRUE(stage_source(program, options).ir);
}

// A reduction of a huge static tensor is not evaluated at compile time: inside a
// function it stays a node; at module level, where it cannot, it is an error.
TEST(StagingErrors, HugeStaticTensorsAreNotFolded) {
  auto staged = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2]):
    return x + sg.sum(sg.zeros((100000, 100000)))
)");
  EXPECT_TRUE(staged.ir) << staged.locations();
  auto r = stage_source(R"(import stagegraph as sg

TOTAL = sg.sum(sg.ones((100000, 100000)))

@sg.function
def f(x: sg.f32[2]):
    return x + TOTAL
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("3:9: error: sum on these static tensors needs 40000000004 bytes at compile time, "
                               "more than the 256 MiB limit"),
            std::string::npos)
      << r.locations();
}

// Nor is a static product that would take the compiler seconds: 2^36 multiply-adds
// at module level are an error; inside a function the matmul stays a node.
TEST(StagingErrors, CostlyStaticProductsAreNotFolded) {
  auto staged = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2]):
    return x + sg.sum(sg.ones((4096, 4096)) @ sg.ones((4096, 4096)))
)");
  ASSERT_TRUE(staged.ir) << staged.locations();
  bool matmul = false;
  for (const ir::Node& n : staged.ir->functions[0].nodes) matmul = matmul || n.op == ops::OpId::MatMul;
  EXPECT_TRUE(matmul);
  auto r = stage_source(R"(import stagegraph as sg

P = sg.ones((4096, 4096)) @ sg.ones((4096, 4096))

@sg.function
def f(x: sg.f32[2]):
    return x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("3:27: error: matmul on these static tensors takes 68719476736 multiply-adds at "
                               "compile time, more than the limit of 268435456"),
            std::string::npos)
      << r.locations();
}

// A float fill for an integer or bool tensor is refused, as eager mode refuses it
// (it used to truncate 0.5 to False); a float beyond int64 given to an f32
// parameter converts without touching int64 (UBSan flagged the old conversion).
TEST(StagingErrors, FloatFillsOfIntegerTensorsAndHugeFloats) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.bool[3], y: sg.i64[3]):
    return sg.logical_and(x, sg.full((3,), 0.5, dtype=sg.bool)), y + sg.full((3,), 2.5e85, dtype=sg.i64)
)");
  EXPECT_FALSE(r.ir);
  const std::string l = r.locations();
  EXPECT_NE(l.find("5:30: error: full: a float fill value for a bool tensor; pass dtype=sg.f32 or an int"),
            std::string::npos) << l;
  auto ok = stage_source(R"(import stagegraph as sg

def scale(x, k: sg.f32):
    return x * k

@sg.function
def f(x: sg.f32[3]):
    return scale(x, 2.5e85) + sg.full((3,), 7, dtype=sg.i64).astype(sg.f32)
)");
  EXPECT_TRUE(ok.ir) << ok.locations();
}

TEST(StagingErrors, ErrorsInSeveralEntriesAreAllReported) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def a(x: sg.f32[2]):
    return undefined_name

@sg.function
def b(x: sg.f32[2]):
    return x[5]
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(),
            "5:12: error: name 'undefined_name' is not defined\n"
            "9:14: error: index 5 is out of bounds for axis 0 with size 2\n"
            "  8:10: note: x declared as f32[2] here\n");
}

TEST(StagingErrors, ItemAssignmentChecksTheRegion) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2, 4]):
    x[0] = sg.ones((3,))
    return x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("5:5: error:"), std::string::npos) << r.locations();
  EXPECT_NE(r.locations().find("cannot broadcast a value of shape"), std::string::npos) << r.locations();
}

TEST(StagingErrors, ItemAssignmentOfAnotherDtypeAsksForAstype) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.i64[4]):
    x[1:3] = 2.5
    return x
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("5:5: error:"), std::string::npos) << r.locations();
  EXPECT_NE(r.locations().find("the value is f32 but the tensor is i64; cast with astype"), std::string::npos)
      << r.locations();
}

TEST(StagingErrors, UnevenSplitOfAStaticDim) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2, 128]):
    q, k, v = sg.split(x, 3, axis=-1)
    return q
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("split: array split does not result in an equal division: 128 elements along "
                               "axis 1 into 3 sections"),
            std::string::npos) << r.locations();
}

TEST(StagingErrors, TopkKOutsideTheAxis) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[5]):
    v, i = sg.topk(x, 6)
    return v
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("5:12: error:"), std::string::npos) << r.locations();
}

// A Python number joins a tensor of a staged branch in the tensor's dtype only
// where that keeps its value, and two numbers only when they are of one kind;
// otherwise one path would silently change (-2.7 into an i64 is -2).
TEST(StagingErrors, BranchesJoinNumbersOnlyWhereValuesSurvive) {
  const std::pair<const char*, const char*> cases[] = {
      {"    return x if x > 0 else -2.7\n",
       "5:12: error: the value of `x if c else y` is i64 in the then branch and the Python float -2.7 in the else"},
      {"    return 1.5 if x > 0 else 2\n",
       "5:12: error: the value of `x if c else y` is the Python float 1.5 in the then branch and the Python int 2"},
      {"    return k if x > 0 else 3000000000\n",
       "5:12: error: the value of `x if c else y` is i32 in the then branch and the Python int 3000000000"},
      {"    y = b\n    if x > 0:\n        y = 5\n    return y\n",
       "6:5: error: variable 'y' is the Python int 5 in the then branch and bool in the else branch"},
      {"    return r(x)\n\ndef r(n):\n    if n <= 0:\n        return 2\n    if n == 1:\n        return 1.5\n"
       "    return r(n - 2)\n",
       "10:5: error: the return value is the Python float 1.5 in the then branch and i64 in the else branch"},
  };
  for (const auto& [body, expected] : cases) {
    auto r = stage_source(std::string("import stagegraph as sg\n\n@sg.function\n"
                                      "def f(x: sg.i64, k: sg.i32, b: sg.bool):\n") + body);
    EXPECT_FALSE(r.ir) << body;
    EXPECT_NE(r.locations().find(expected), std::string::npos) << expected << "\n" << r.locations();
  }
}

// NumPy 2 (NEP 50): a Python int beside an i32 tensor must fit i32.
TEST(StagingErrors, PythonIntsOutOfRangeOfAnI32Tensor) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.i32["N"]):
    return x + 2147483647, x * -2147483648, sg.astype(3000000000, sg.i32), x - 3000000000
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(),
            "5:78: error: the Python int 3000000000 is out of range for i32; cast the tensor with astype(sg.i64)\n");
}

// A chain of staged scalar comparisons is an `and` of them, computed in full only
// where its later operands cannot fail; tensors stay ambiguous (NumPy).
TEST(StagingErrors, ChainedComparisonsOfStagedValues) {
  auto ok = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32, i: sg.i64):
    return 0.0 < x < 1.0, 0 <= i < 3 != i
)");
  EXPECT_TRUE(ok.ir) << ok.locations();
  auto may_fail = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4], i: sg.i64):
    return 0 <= i < 4 and x[i] > 0.0, 0 <= i < x[i]
)");
  EXPECT_FALSE(may_fail.ir);
  EXPECT_NE(may_fail.locations().find("5:48: error: a chained comparison of staged values evaluates this operand"),
            std::string::npos) << may_fail.locations();
  auto tensors = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[4]):
    return 0.0 < x < 1.0
)");
  EXPECT_FALSE(tensors.ir);
  EXPECT_NE(tensors.locations().find("5:12: error: chained comparisons of tensors are ambiguous"), std::string::npos)
      << tensors.locations();
}

TEST(StagingErrors, AnEmptyResultName) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[3]):
    return {"a": x, "": x}
)");
  EXPECT_FALSE(r.ir);
  EXPECT_EQ(r.locations(), "4:5: error: the keys of a returned dict must not be empty\n");
}

TEST(StagingErrors, DictsReturnedFromBranchesNeedTheSameKeys) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[3]):
    if x[0] > 0.0:
        return {"a": x, "b": x}
    return {"b": x, "a": x}
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("7:5: error: the return value is a dict with keys ['b', 'a'] where the code from line 7 on runs and ['a', 'b']"), std::string::npos)
      << r.locations();
  EXPECT_NE(r.locations().find("both need the same keys in the same order"), std::string::npos) << r.locations();
}

TEST(StagingErrors, BranchesJoinNumbersThatKeepTheirValues) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32, n: sg.i64, k: sg.i32):
    y = 0
    if x > 0.0:
        y = x
    m = -1
    if n > 2:
        m = n
    return y, m, k if n > 0 else 7, x if n > 0 else 2, 1 if n > 0 else 2
)");
  EXPECT_TRUE(r.ir) << r.locations();
}

// SPEC §8: a mismatch of symbolic dims is checked at run time, and warned about
// now where no binding of the symbols makes the dims agree (4 against N*3).
TEST(StagingErrors, SymbolicDimsThatCanNeverAgreeWarnAtTheOp) {
  auto r = stage_source(R"(import stagegraph as sg


@sg.function
def f(x: sg.f32["N", 4], v: sg.f32["N", 2]):
    w = sg.concatenate([v, v, v], axis=0)
    return x @ w
)");
  ASSERT_TRUE(r.ir) << r.locations();  // a warning: the graph is still written
  ASSERT_EQ(r.diags->diagnostics().size(), 1u) << r.locations();
  EXPECT_EQ(r.diags->format(r.diags->diagnostics()[0]),
            "model.py:7:14: warning: matmul: inner dimensions 4 and N*3 of [N, 4] @ [N*3, 2] cannot be equal for "
            "any N, so this fails at run time for every input\n"
            "        return x @ w\n"
            "               ~~^~~\n"
            "model.py:5:10: note: x declared as f32[N, 4] here\n"
            "    def f(x: sg.f32[\"N\", 4], v: sg.f32[\"N\", 2]):\n"
            "             ^~~~~~~~~~~~~~\n"
            "model.py:6:9: note: `sg.concatenate([v, v, v], axis=0)` produced f32[N*3, 2] here\n"
            "        w = sg.concatenate([v, v, v], axis=0)\n"
            "            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");

  auto b = stage_source(R"(import stagegraph as sg


@sg.function
def f(x: sg.f32["N", 4], y: sg.f32["M", 5]):
    a = sg.concatenate([x, x], axis=0)
    flat = sg.reshape(y, (-1,))
    return a + sg.ones((5, 4)), flat + sg.ones((3,)), sg.concatenate([a, sg.ones((5, 3))], axis=1), a + 1.0
)");
  ASSERT_TRUE(b.ir) << b.locations();
  EXPECT_EQ(b.locations(),
            "8:14: warning: add: cannot broadcast [N*2, 4] with [5, 4]: N*2 can be neither 5 nor 1 for any N, so "
            "this fails at run time for every input\n"
            "  6:9: note: `sg.concatenate([x, x], axis=0)` produced f32[N*2, 4] here\n"
            "  8:16: note: `sg.ones((5, 4))` produced f32[5, 4] here\n"
            "8:38: warning: add: cannot broadcast [M*5] with [3]: M*5 can be neither 3 nor 1 for any M, so this "
            "fails at run time for every input\n"
            "  7:12: note: `sg.reshape(y, (-1,))` produced f32[M*5] here\n"
            "  8:40: note: `sg.ones((3,))` produced f32[3] here\n"
            "8:55: warning: concatenate: inputs differ in dimension 0, which is not the axis: [N*2, 4] and [5, 3]: "
            "N*2 and 5 cannot be equal for any N, so this fails at run time for every input\n"
            "  6:9: note: `sg.concatenate([x, x], axis=0)` produced f32[N*2, 4] here\n"
            "  8:74: note: `sg.ones((5, 3))` produced f32[5, 3] here\n");
}

// Sound: where some binding makes the dims agree (N*2 is 6 at N = 3), no warning.
TEST(StagingErrors, SymbolicDimsThatCanAgreeStayQuiet) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 3], y: sg.f32["M", 3]):
    a = sg.concatenate([x, x], axis=0)
    c = sg.concatenate([x, y], axis=1)
    return a + sg.ones((6, 3)), c @ sg.ones((6, 2)), sg.concatenate([a, y], axis=1), x @ sg.ones((3, 2))
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.locations(), "");
}

}  // namespace
}  // namespace sg::compiler
