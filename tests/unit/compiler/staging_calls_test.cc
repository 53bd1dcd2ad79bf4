// Calls in staging (SPEC §6): compile-time evaluation with static arguments,
// inlining of non-recursive calls, and Call nodes to graph functions (one per
// specialisation) for recursion and @sg.function helpers.
#include <gtest/gtest.h>

#include <string>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;
using testing::StageResult;

// Call nodes anywhere in the module.
size_t count_calls(const StageResult& r) {
  size_t n = 0;
  for (const ir::Function& f : r.ir->functions)
    for (const ir::Node& node : f.nodes) n += node.kind == ir::NodeKind::kCall;
  return n;
}

// Call nodes in one function, by the callee's name.
size_t count_calls_to(const StageResult& r, const ir::Function& f, const std::string& callee) {
  size_t n = 0;
  for (const ir::Node& node : f.nodes)
    n += node.kind == ir::NodeKind::kCall && r.ir->functions.at(size_t(node.functions.at(0))).name == callee;
  return n;
}

const ir::Function* find_function(const StageResult& r, const std::string& name) {
  for (const ir::Function& f : r.ir->functions)
    if (f.name == name) return &f;
  return nullptr;
}

// Functions that are graph functions of `def_name` (not branch bodies): NAME or NAME.k.
size_t count_specialisations(const StageResult& r, const std::string& def_name) {
  size_t n = 0;
  for (const ir::Function& f : r.ir->functions) {
    if (f.name == def_name) {
      ++n;
      continue;
    }
    if (f.name.rfind(def_name + ".", 0) != 0) continue;
    const std::string rest = f.name.substr(def_name.size() + 1);
    n += !rest.empty() && rest.find_first_not_of("0123456789") == std::string::npos;
  }
  return n;
}

const char* const kFib = R"(import stagegraph as sg

def fib(n):
    if n < 2:
        r = n
    else:
        r = fib(n - 1) + fib(n - 2)
    return r
)";

TEST(StagingCalls, StaticRecursionRunsAtCompileTime) {
  auto r = stage_source(std::string(kFib) + R"(
@sg.function
def main(x: sg.f32[3]):
    return x + fib(10)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(count_calls(r), 0u);
  EXPECT_EQ(find_function(r, "fib"), nullptr);
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_NE(ir::print(*r.ir).find("= 55"), std::string::npos) << ir::print(*r.ir);
}

TEST(StagingCalls, StagedRecursionCallsAGraphFunction) {
  auto r = stage_source(std::string(kFib) + R"(
@sg.function
def main(n: sg.i64):
    return fib(n)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  // The first call is a Call node too; the recursive calls sit in the else branch.
  EXPECT_EQ(count_calls_to(r, r.function("main"), "fib"), 1u);
  EXPECT_EQ(count_specialisations(r, "fib"), 1u);
  EXPECT_EQ(count_calls(r), 3u);
  size_t in_branches = 0;
  for (const ir::Function& f : r.ir->functions)
    if (f.name.rfind("fib.", 0) == 0) in_branches += count_calls_to(r, f, "fib");
  EXPECT_EQ(in_branches, 2u) << ir::print(*r.ir);
  EXPECT_EQ(r.result_type("main"), "i64[]");  // inferred, no annotation
}

TEST(StagingCalls, EarlyReturnInAStagedIfEndsTheRecursion) {
  auto r = stage_source(R"(import stagegraph as sg

def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

@sg.function
def main(n: sg.i64):
    return fib(n)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(count_calls_to(r, r.function("main"), "fib"), 1u);
  EXPECT_EQ(count_specialisations(r, "fib"), 1u);
  EXPECT_EQ(count_calls(r), 3u);
  EXPECT_EQ(r.result_type("main"), "i64[]");
}

TEST(StagingCalls, MutualRecursion) {
  auto r = stage_source(R"(import stagegraph as sg

def is_even(n):
    if n == 0:
        r = n == 0
    else:
        r = is_odd(n - 1)
    return r

def is_odd(n):
    if n == 0:
        r = n != 0
    else:
        r = is_even(n - 1)
    return r

@sg.function
def parity(n: sg.i64):
    return is_even(n), is_odd(n)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(count_specialisations(r, "is_even"), 1u);
  EXPECT_EQ(count_specialisations(r, "is_odd"), 1u);
  EXPECT_EQ(count_calls_to(r, r.function("parity"), "is_even"), 1u);
  EXPECT_EQ(count_calls_to(r, r.function("parity"), "is_odd"), 1u);
  EXPECT_EQ(count_calls(r), 4u);
  EXPECT_EQ(r.result_type("parity", 0), "bool[]");
}

TEST(StagingCalls, NonRecursiveCallsAreInlined) {
  auto r = stage_source(R"(import stagegraph as sg

def dense(x, w):
    return sg.tanh(x @ w)

@sg.function
def f(x: sg.f32["N", 4], w: sg.f32[4, 4]):
    return dense(dense(x, w), w)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(count_calls(r), 0u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::MatMul), 2u);
}

TEST(StagingCalls, OneGraphFunctionPerSpecialisation) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def scale(x: sg.f32["N"], k: sg.f32):
    return x * k

@sg.function
def g(a: sg.f32[3], b: sg.f32[4], k: sg.f32):
    p = scale(a, k) + scale(a, k)
    q = scale(a, 2.0) + scale(a, 2.0)
    s = scale(b, k)
    t = scale(sg.ones((3,)), 5.0)
    return p + q + t, s
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  // The entry `scale`, then (a: [3], staged k), (a: [3], k = 2.0), (b: [4], staged k);
  // the all-static call ran at compile time.
  EXPECT_EQ(count_specialisations(r, "scale"), 4u);
  EXPECT_EQ(count_calls(r), 5u);
  const ir::Function* with_two = nullptr;
  for (const ir::Function& f : r.ir->functions)
    if (f.name.rfind("scale.", 0) == 0 && f.params.size() == 1) with_two = &f;
  ASSERT_NE(with_two, nullptr) << ir::print(*r.ir);
  EXPECT_EQ(r.ir->format_type(with_two->values.at(size_t(with_two->params[0])).type), "f32[3]");
}

TEST(StagingCalls, ShapesThatChangePerLevelWidenOnce) {
  auto r = stage_source(R"(import stagegraph as sg

def rsum(x):
    n = x.shape[0]
    if n == 1:
        r = x[0]
    else:
        half = n // 2
        r = rsum(x[:half]) + rsum(x[half:])
    return r

@sg.function
def f(x: sg.f32[8], y: sg.f32[5]):
    return rsum(x) + rsum(y)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  // [8] widened to a symbolic dim, which [5] then matches.
  EXPECT_EQ(count_specialisations(r, "rsum"), 1u);
  const ir::Function* rsum = find_function(r, "rsum");
  ASSERT_NE(rsum, nullptr);
  ASSERT_EQ(rsum->params.size(), 1u);
  const ir::Type& t = rsum->values.at(size_t(rsum->params[0])).type;
  ASSERT_EQ(t.rank(), 1u);
  EXPECT_FALSE(t.shape[0].is_static()) << r.ir->format_type(t);
  EXPECT_EQ(count_calls_to(r, r.function("f"), "rsum"), 2u);
  EXPECT_EQ(r.result_type("f"), "f32[]");
}

TEST(StagingCalls, ReturnAnnotationGivesTheResultType) {
  auto r = stage_source(R"(import stagegraph as sg

def encode(i, xs) -> sg.f32[4]:
    if i <= 0:
        h = sg.tanh(xs[0])
    else:
        h = sg.tanh(encode(i - 1, xs) + xs[i])
    return h

@sg.function
def f(i: sg.i64, xs: sg.f32["M", 4]):
    return encode(i, xs)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("f"), "f32[4]");
}

TEST(StagingCalls, ResultTypeIsInferredFromThePathThatDoesNotRecurse) {
  // The recursive path needs the result type ([3] @ v) before any return;
  // the base path gives it.
  auto r = stage_source(R"(import stagegraph as sg

def encode(i, xs, w, v):
    if i <= 0:
        h = sg.tanh(xs[0] @ w)
    else:
        h = sg.tanh(encode(i - 1, xs, w, v) @ v + xs[i] @ w)
    return h

@sg.function
def f(i: sg.i64, xs: sg.f32["M", 4], w: sg.f32[4, 3], v: sg.f32[3, 3]):
    return encode(i, xs, w, v)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("f"), "f32[3]");
  EXPECT_EQ(r.locations(), "");
  EXPECT_EQ(count_specialisations(r, "encode"), 1u);
}

TEST(StagingCalls, TreeRecursionWithTwoCallsNeedsNoAnnotation) {
  auto r = stage_source(R"(import stagegraph as sg

def encode(i, left, right, xs, w_leaf, w):
    l = sg.take(left, i)
    if l < 0:
        h = sg.tanh(sg.take(xs, i, axis=0) @ w_leaf)
    else:
        h_left = encode(l, left, right, xs, w_leaf, w)
        h_right = encode(sg.take(right, i), left, right, xs, w_leaf, w)
        h = sg.tanh(sg.concatenate([h_left, h_right, xs[i]]) @ w)
    return h

@sg.function
def tree(root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", 8], w_leaf: sg.f32[8, 8],
         w: sg.f32[24, 8]):
    return encode(root, left, right, xs, w_leaf, w)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("tree"), "f32[8]");
  const ir::Function* encode = find_function(r, "encode");
  ASSERT_NE(encode, nullptr);
  EXPECT_EQ(r.ir->format_type(encode->values.at(size_t(encode->results.at(0))).type), "f32[8]");
}

TEST(StagingCalls, AResultTiedToAnArgumentKeepsItsDims) {
  // Every path returns x's shape: the assumption [N, 3] (N the parameter's
  // dim) holds, and the caller sees its own argument's dims.
  auto r = stage_source(R"(import stagegraph as sg

def down(n, x):
    if n <= 0:
        return x * 2.0
    return down(n - 1, x) + x

@sg.function
def f(n: sg.i64, x: sg.f32["N", 3]):
    return down(n, x)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("f"), "f32[N, 3]");
}

TEST(StagingCalls, MutualRecursionInfersSymbolicResults) {
  auto r = stage_source(R"(import stagegraph as sg

def halve(x, n):
    if n <= 0:
        return x
    return shift(x * 0.5, n - 1) + 1.0

def shift(x, n):
    if n <= 0:
        y = x * 2.0
    else:
        y = halve(x, n - 1) - x
    return y

@sg.function
def f(x: sg.f32["N", 3], n: sg.i64):
    return halve(x, n)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("f"), "f32[N, 3]");
  EXPECT_EQ(count_specialisations(r, "halve"), 1u);
  EXPECT_EQ(count_specialisations(r, "shift"), 1u);
}

TEST(StagingCalls, ResultDimsThatDifferAcrossReturnPathsWiden) {
  // The base path returns [N]; the recursive one [N + 1]: the assumption [N]
  // fails, the differing dim becomes a new symbol, and that holds.
  auto r = stage_source(R"(import stagegraph as sg

def grow(n, x):
    if n <= 0:
        return x
    return sg.concatenate([grow(n - 1, x), x[:1]])

@sg.function
def f(n: sg.i64, x: sg.f32["N"]):
    return grow(n, x)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  const ir::Function& f = r.function("f");
  const ir::Type& t = f.values.at(size_t(f.results.at(0))).type;
  ASSERT_EQ(t.rank(), 1u) << r.result_type("f");
  EXPECT_FALSE(t.shape[0].is_static());
  EXPECT_NE(r.result_type("f"), "f32[N]");
}

TEST(StagingCalls, ABaseCaseThatReturnsAnIntGivesWayToAFloat) {
  // `return 0` alone would be i64; joined with the float path it is f32.
  auto r = stage_source(R"(import stagegraph as sg

def total(n, x):
    if n <= 0:
        return 0
    return total(n - 1, x) + sg.sum(x)

@sg.function
def f(n: sg.i64, x: sg.f32[3]):
    return total(n, x)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("f"), "f32[]");
  EXPECT_EQ(r.locations(), "");
}

TEST(StagingCalls, ReturnPathsOfDifferentRanksAreAnError) {
  auto r = stage_source(R"(import stagegraph as sg

def bad(n, x):
    if n <= 0:
        r = sg.sum(x)
    else:
        r = bad(n - 1, x) + x
    return r

@sg.function
def f(n: sg.i64, x: sg.f32[4]):
    return bad(n, x)
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("the ranks differ"), std::string::npos) << r.locations();
  EXPECT_EQ(r.locations().find("cannot infer"), std::string::npos) << r.locations();
}

TEST(StagingCalls, AnErrorOnTheRecursivePathIsReportedNotAskedToAnnotate) {
  auto r = stage_source(R"(import stagegraph as sg

def encode(i, xs, w, v):
    if i <= 0:
        h = sg.tanh(xs[0] @ w)
    else:
        h = sg.tanh(encode(i - 1, xs, w, v) @ v)
    return h

@sg.function
def f(i: sg.i64, xs: sg.f32["M", 4], w: sg.f32[4, 3], v: sg.f32[4, 3]):
    return encode(i, xs, w, v)
)");
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  EXPECT_NE(errors.find("7:45: error: matmul"), std::string::npos) << errors;
  EXPECT_EQ(r.diags->error_count(), 1u) << errors;
}

TEST(StagingCalls, UninferableResultAsksForAnAnnotation) {
  // No path returns without recursing.
  auto r = stage_source(R"(import stagegraph as sg

def spin(i, x):
    if i <= 0:
        r = spin(i + 1, x)
    else:
        r = spin(i - 1, x) * 2.0
    return r

@sg.function
def f(i: sg.i64, x: sg.f32[3]):
    return spin(i, x)
)");
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  EXPECT_NE(errors.find("3:5: error: cannot infer the result type of 'spin', which is recursive: every path to a "
                        "return goes through a recursive call; add a return annotation"),
            std::string::npos)
      << errors;
  EXPECT_EQ(r.diags->error_count(), 1u) << errors;
}

TEST(StagingCalls, UninferableMutualRecursionNamesTheFirstFunction) {
  auto r = stage_source(R"(import stagegraph as sg

def ping(n):
    if n > 0:
        return pong(n - 1) + 1
    return pong(n + 1)

def pong(n):
    return ping(n) * 2

@sg.function
def f(n: sg.i64):
    return ping(n)
)");
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  EXPECT_NE(errors.find("3:5: error: cannot infer the result type of 'ping'"), std::string::npos) << errors;
  EXPECT_EQ(r.diags->error_count(), 1u) << errors;
}

TEST(StagingCalls, AnUninferableCalleeIsNamedEvenWhenItsCallerHasABaseCase) {
  auto r = stage_source(R"(import stagegraph as sg

def outer(n):
    if n <= 0:
        return n
    return spin(n)

def spin(n):
    return outer(spin(n - 1))

@sg.function
def f(n: sg.i64):
    return outer(n)
)");
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  EXPECT_NE(errors.find("cannot infer the result type of 'spin'"), std::string::npos) << errors;
  EXPECT_EQ(r.diags->error_count(), 1u) << errors;
}

TEST(StagingCalls, TheSameProgramWithAnAnnotationCompiles) {
  auto r = stage_source(R"(import stagegraph as sg

def encode(i, xs, w, v) -> sg.f32[3]:
    if i <= 0:
        h = sg.tanh(xs[0] @ w)
    else:
        h = sg.tanh(encode(i - 1, xs, w, v) @ v + xs[i] @ w)
    return h

@sg.function
def f(i: sg.i64, xs: sg.f32["M", 4], w: sg.f32[4, 3], v: sg.f32[3, 3]):
    return encode(i, xs, w, v)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(r.result_type("f"), "f32[3]");
}

TEST(StagingCalls, ResultThatContradictsTheAnnotationIsAnError) {
  auto r = stage_source(R"(import stagegraph as sg

def down(n, x) -> sg.f32[4]:
    if n <= 0:
        y = x
    else:
        y = down(n - 1, x)
    return y

@sg.function
def f(n: sg.i64, x: sg.f32[3]):
    return down(n, x)
)");
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  EXPECT_NE(errors.find("error: 'down' returns f32["), std::string::npos) << errors;
  EXPECT_NE(errors.find("but its return annotation says f32[4]"), std::string::npos) << errors;
}

TEST(StagingCalls, CompileTimeRecursionLimitNamesTheFunction) {
  auto r = stage_source(R"(import stagegraph as sg

def down(n):
    return down(n - 1)

@sg.function
def f(x: sg.f32[3]):
    return x + down(3)
)");
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("recursion of 'down' goes deeper than 10000 calls at compile time"), std::string::npos)
      << r.locations();
}

TEST(StagingCalls, DeepCompileTimeRecursionDoesNotOverflow) {
  auto r = stage_source(R"(import stagegraph as sg

def count(n):
    if n == 0:
        return 0
    return 1 + count(n - 1)

@sg.function
def f(x: sg.f32[3]):
    return x + count(9990)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_NE(ir::print(*r.ir).find("= 9990"), std::string::npos);
}

// A recursion through a static argument, each level behind a staged branch,
// stages each specialisation once: a pass that left no branch pending is final
// (staging it again, as a check and with diagnostics on, repeated every level
// below it: 3^depth passes, past any test's time at depth 60). Its compile-time
// prints come out once per level.
TEST(StagingCalls, RecursionThroughStaticArgumentsStagesEachLevelOnce) {
  auto r = stage_source(R"(import stagegraph as sg

def scale(x, i):
    if x[0] > 100.0:
        return x
    if i == 0:
        return x
    print("level", i)
    return scale(x * 2.0, i - 1)

@sg.function
def f(x: sg.f32[3]):
    return scale(x, 60)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(count_specialisations(r, "scale"), 61u);
  for (int level : {1, 30, 60}) {
    const std::string line = "level " + std::to_string(level) + "\n";
    size_t count = 0;
    for (size_t at = r.printed.find(line); at != std::string::npos; at = r.printed.find(line, at + 1))
      count += at == 0 || r.printed[at - 1] == '\n';
    EXPECT_EQ(count, 1u) << line << r.printed;
  }
}

// Warnings and compile-time prints of a recursive function's body are recorded
// by the pass that is kept and dropped with the passes that are rolled back (the
// probe, which leaves the recursive branch pending): one of each.
TEST(StagingCalls, WarningsInARecursiveFunctionComeOutOnce) {
  auto r = stage_source(R"(import stagegraph as sg

def shrink(x, n):
    if n <= 0:
        return x
    w = sg.sum(x + sg.reshape(x, (3, 1)))
    print("shrinking")
    return shrink(x, n - 1) * 0.5 + w

@sg.function
def f(x: sg.f32[3], n: sg.i64):
    return shrink(x, n)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  size_t warnings = 0;
  for (const Diagnostic& d : r.diags->diagnostics()) warnings += d.severity == Severity::kWarning;
  EXPECT_EQ(warnings, 1u) << r.locations();
  EXPECT_NE(r.locations().find("6:18: warning: add: broadcasting"), std::string::npos) << r.locations();
  EXPECT_EQ(r.printed, "shrinking\n");
}

// A static argument that grows while the recursion ends on a run-time test
// never ends at compile time: the depth limit reports it, once, without each
// level staging the failing pass again (which made it exponential).
TEST(StagingCalls, UnboundedStaticArgumentReportsTheDepthLimitOnce) {
  auto r = stage_source(R"(import stagegraph as sg

def count_pos(x, i):
    if i >= x.shape[0]:
        return 0
    if x[i] > 0:
        return 1 + count_pos(x, i + 1)
    return count_pos(x, i + 1)

@sg.function
def f(x: sg.f32["N"]):
    return count_pos(x, 0)
)");
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  const std::string message = "recursion of 'count_pos' goes deeper than 10000 calls at compile time";
  const size_t first = errors.find(message);
  EXPECT_NE(first, std::string::npos) << errors;
  EXPECT_EQ(errors.find(message, first + 1), std::string::npos) << errors;
}

// A recursion with a run-time depth whose static argument climbs to a value
// that then repeats (rec(min(v + 1, K), d - 1) from a static v): one
// specialisation per value, the last one recursive. Its probe leaves a branch
// pending on itself; that pending branch, rolled back with the probe, once made
// every enclosing specialisation's pass look incomplete, so each was staged
// again, the ones nested in it included: 3^K passes (K = 16 took minutes). Now
// at most two passes per specialisation: a pass budget of that size holds.
TEST(StagingCalls, RecursionToARepeatingStaticValueStagesEachValueOnce) {
  for (int k : {16, 64}) {
    const std::string program = R"(import stagegraph as sg

K = )" + std::to_string(k) + R"(.0

def rec(v, d):
    if d > 0:
        return rec(sg.minimum(v + 1.0, K), d - 1)
    return v

@sg.function
def f(d: sg.i64):
    return rec(sg.zeros((), dtype=sg.f32), d)
)";
    StageOptions options;
    options.max_specialisation_passes = 2 * (k + 1);
    auto r = stage_source(program, options);
    ASSERT_TRUE(r.ir) << "K = " << k << "\n" << r.locations();
    EXPECT_EQ(ir::verify(*r.ir), "");
    EXPECT_EQ(count_specialisations(r, "rec"), size_t(k + 1)) << "K = " << k;  // v = 0, 1, ..., K
    EXPECT_EQ(r.result_type("f"), "f32[]");
  }
}

// A chain of 41 recursive specialisations (v = 0, 1, ..., 40), each of which also
// calls itself with the same static value while d > 100.
constexpr const char* kSelfCallingChain = R"(import stagegraph as sg

K = 40.0

def rec(v, d):
    if d > 100:
        return rec(v, d - 1)
    if d > 0:
        return rec(sg.minimum(v + 1.0, K), d - 1)
    return v

@sg.function
def f(d: sg.i64):
    return rec(sg.zeros((), dtype=sg.f32), d)
)";

// Where every specialisation of the chain also calls itself, each one's probe
// is left pending on its own call and rolled back, dropping the levels staged
// inside it. They are staged again from their settled result types, one pass
// each, not inferred again: about K^2 / 2 passes (2^K before).
TEST(StagingCalls, RolledBackSpecialisationsAreStagedAgainFromTheirSettledResults) {
  const char* const program = kSelfCallingChain;
  StageOptions options;
  options.max_specialisation_passes = 41 * 41;
  auto r = stage_source(program, options);
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  EXPECT_EQ(count_specialisations(r, "rec"), 41u);
  EXPECT_EQ(r.result_type("f"), "f32[]");
}

// The passes over specialisations are a compile-time budget of their own: a
// recursion that needs more (the chain above, quadratic in its length) stops
// with one error at the call that needed one more pass.
TEST(StagingCalls, SpecialisationPassBudgetStopsWithALocatedError) {
  const char* const program = kSelfCallingChain;
  StageOptions options;
  options.max_specialisation_passes = 500;
  auto r = stage_source(program, options);
  EXPECT_FALSE(r.ir);
  const std::string errors = r.locations();
  const std::string message =
      "9:16: error: staging graph functions runs past 500 specialisation passes, in all; this call needed one more";
  const size_t first = errors.find(message);
  EXPECT_NE(first, std::string::npos) << errors;
  EXPECT_EQ(errors.find("error:", first + message.size()), std::string::npos) << errors;  // once, and nothing else
  // Within the budget the same recursion compiles.
  options.max_specialisation_passes = 20000;
  const std::string shallow = std::string(program).replace(std::string(program).find("40.0"), 4, "6.0");
  auto ok = stage_source(shallow, options);
  EXPECT_TRUE(ok.ir) << ok.locations();
}

}  // namespace
}  // namespace sg::compiler
