// Staged loops and the flags of break/continue/return (SPEC §5): the IR they
// produce, and the errors for every misuse, with their lines.
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

size_t count_kind(const ir::Module& m, ir::NodeKind kind) {
  size_t n = 0;
  for (const ir::Function& f : m.functions)
    for (const ir::Node& node : f.nodes) n += node.kind == kind;
  return n;
}

const ir::Node* find_while(const ir::Function& f) {
  for (const ir::Node& n : f.nodes)
    if (n.kind == ir::NodeKind::kWhile) return &n;
  return nullptr;
}

TEST(StagingLoops, WhileWithAStagedTestBecomesAWhileNode) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64, x: sg.f32[4]):
    i = 0
    acc = x
    while i < n:
        tmp = acc * 2.0
        acc = tmp + x
        i += 1
    return acc
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  const ir::Node* w = find_while(r.function("f"));
  ASSERT_NE(w, nullptr);
  const ir::Function& cond = r.ir->functions.at(size_t(w->functions[0]));
  const ir::Function& body = r.ir->functions.at(size_t(w->functions[1]));
  // Carried: i and acc; then the captures n and x. `tmp` is dead after each
  // iteration: not carried.
  EXPECT_EQ(w->inputs.size(), 4u) << ir::print(*r.ir);
  EXPECT_EQ(body.params.size(), 4u);
  EXPECT_EQ(body.results.size(), 4u);
  EXPECT_EQ(cond.params.size(), 4u);
  EXPECT_EQ(cond.results.size(), 1u);
  EXPECT_EQ(r.result_type("f"), "f32[4]");
  EXPECT_NE(r.explained.find("model.py:7:5: while: staged (test `i < n` depends on input 'n')"), std::string::npos)
      << r.explained;
}

// A loop-carried variable that starts as a Python number takes the dtype of the
// tensors it meets (NEP 50), as eager mode's first iteration gives it: the loop
// is staged again with the number in that dtype. What the first staging
// reported is reported once.
TEST(StagingLoops, CarriedPythonNumbersTakeTheDtypeTheyMeet) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], y: sg.i32["N"], c: sg.f32["N", 1]):
    s = 0
    t = 0
    k = 0
    for i in range(x.shape[0]):
        w = x + c
        print("static")
        if x[i] > 0:
            s = s + x[i] * 2
        t += y[i]
        k = k + 1
    return s, t, k
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  EXPECT_EQ(r.result_type("f", 0), "f32[]");
  EXPECT_EQ(r.result_type("f", 1), "i32[]");
  EXPECT_EQ(r.result_type("f", 2), "i64[]");
  const std::string text = r.locations();
  EXPECT_EQ(text.find("warning: add: broadcasting"), text.rfind("warning: add: broadcasting")) << text;
  EXPECT_NE(text.find("warning: add: broadcasting"), std::string::npos) << text;
  EXPECT_EQ(r.explained.find("if: staged"), r.explained.rfind("if: staged")) << r.explained;
}

// `while True:` that leaves by a break (or return) known only at run time is
// a While node from the start: the unrolled first iteration is undone.
TEST(StagingLoops, WhileTrueWithARunTimeBreakIsAWhileNode) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[3]):
    while True:
        x = x * 0.5
        if sg.sum(x) < 1.0:
            break
    return x

@sg.function
def g(x: sg.f32["N"]):
    i = 0
    while True:
        if x[i] > 0:
            return i
        i = i + 1
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  for (const char* name : {"f", "g"}) {
    size_t whiles = 0, ops = 0;
    for (const ir::Node& n : r.function(name).nodes) {
      whiles += n.kind == ir::NodeKind::kWhile;
      ops += n.kind == ir::NodeKind::kOp && n.op != ops::OpId::Full;
    }
    // The loop and its initial values (g's return value before its return, a
    // `full`): nothing of the undone iteration is left.
    EXPECT_EQ(whiles, 1u) << ir::print(*r.ir);
    EXPECT_EQ(ops, 0u) << ir::print(*r.ir);
  }
  EXPECT_EQ(r.result_type("g"), "i64[]");
  EXPECT_NE(r.explained.find("model.py:5:5: while: staged (the test `True` is static, but the loop ends by a break "
                             "or return known only at run time)"),
            std::string::npos)
      << r.explained;
  EXPECT_EQ(r.explained.find("model.py:5:5: while: compile time"), std::string::npos) << r.explained;
}

// So is a loop whose test is static but reads a variable that the first
// iteration's run-time break made staged: `j < 3` below would turn staged at its
// second test (j is 0 or 1 by then), which is an error for a loop unrolled at
// compile time. The return case reads only static variables in its test.
TEST(StagingLoops, StaticTestWithARunTimeBreakIsAWhileNode) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"]):
    j = 0
    while j < 3:
        if x[0] * j > 1.0:
            break
        j += 1
    return j

@sg.function
def g(x: sg.f32[4]):
    k = 0
    while k < 4:
        if x[k] > 0:
            return x[k]
        k += 1
    return x[0]
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  for (const char* name : {"f", "g"}) {
    size_t whiles = 0;
    for (const ir::Node& n : r.function(name).nodes) whiles += n.kind == ir::NodeKind::kWhile;
    EXPECT_EQ(whiles, 1u) << name << "\n" << ir::print(*r.ir);
  }
  EXPECT_EQ(r.result_type("f"), "i64[]");
  EXPECT_NE(r.explained.find("model.py:6:5: while: staged (the test `j < 3` is static, but the loop ends by a "
                             "break or return known only at run time)"),
            std::string::npos)
      << r.explained;
}

TEST(StagingLoops, ForOverRangesAndTensors) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(xs: sg.f32["T", 3], n: sg.i64):
    h = sg.zeros((3,))
    for t in range(xs.shape[0]):
        h = sg.tanh(h + xs[t])
    for row in xs:
        h = h + row
    for k in sg.range(2):
        h = h * 2.0
    for k in range(2):
        h = h + 1.0
    return h
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  EXPECT_EQ(count_kind(*r.ir, ir::NodeKind::kWhile), 3u);  // range(T), over xs, sg.range; range(2) unrolls
  EXPECT_NE(r.explained.find("model.py:6:5: for: staged (bound `xs.shape[0]` depends on input 'xs')"),
            std::string::npos) << r.explained;
  EXPECT_NE(r.explained.find("model.py:8:5: for: staged (iterating over a tensor whose first dim T"),
            std::string::npos) << r.explained;
  EXPECT_NE(r.explained.find("model.py:10:5: for: staged (sg.range always stages)"), std::string::npos);
  EXPECT_NE(r.explained.find("model.py:12:5: for: compile time"), std::string::npos);
}

TEST(StagingLoops, BreakContinueReturnBecomeFlagsAndStayStructured) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], limit: sg.f32):
    i = 0
    while i < len(x):
        if x[i] < 0.0:
            i += 1
            continue
        if x[i] > limit:
            return i
        if x[i] == limit:
            break
        i += 1
    return -1
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  EXPECT_EQ(count_kind(*r.ir, ir::NodeKind::kWhile), 1u);
  EXPECT_EQ(count_kind(*r.ir, ir::NodeKind::kCall), 0u);
  EXPECT_EQ(r.result_type("f"), "i64[]");
}

TEST(StagingLoops, ShortCircuitRunsTheRightSideInAnIf) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N"], i: sg.i64):
    safe = i < len(x) and x[i] > 0.0
    plain = i > 0 and i < 5
    return safe, plain
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(count_kind(*r.ir, ir::NodeKind::kIf), 1u);  // only the side that indexes
  EXPECT_EQ(r.count_ops("f", ops::OpId::LogicalAnd), 1u);
  // The index runs inside the then branch, never in the entry function.
  EXPECT_EQ(r.count_ops("f", ops::OpId::Slice) + r.count_ops("f", ops::OpId::Take), 0u);
}

TEST(StagingLoops, TensorListsAndRelaxedDims) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(xs: sg.f32["T", 3]):
    out = []
    kept = sg.relax(sg.zeros((0, 3)), "K", 0)
    for row in xs:
        out.append(row * 2.0)
        if sg.sum(row) > 0.0:
            kept = sg.concatenate([kept, sg.expand_dims(row, 0)])
    return sg.stack(out), sg.concatenate(out), kept
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  EXPECT_EQ(r.result_type("f", 0), "f32[out#1, 3]") << ir::print(*r.ir);
  EXPECT_EQ(r.result_type("f", 2), "f32[K, 3]");
}

TEST(StagingLoops, PrintAndAssertBecomeNodes) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64):
    assert n > 0, "n must be positive"
    print("n is", n, "{}")
    return n
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::Print), 1u);
  for (const ir::Node& n : r.function("f").nodes) {
    if (n.kind == ir::NodeKind::kOp && n.op == ops::OpId::Print) {
      EXPECT_EQ(n.attrs.values[0].s, "n is {} {{}}");
    }
    if (n.kind == ir::NodeKind::kOp && n.op == ops::OpId::Assert) {
      EXPECT_EQ(n.attrs.values[0].s, "n must be positive");
    }
  }
}

// ---- errors, each with its line ----------------------------------------------------

std::string errors_of(const std::string& body) {
  auto r = stage_source("import stagegraph as sg\n\n@sg.function\n" + body);
  EXPECT_FALSE(r.ir);
  return r.locations();
}

TEST(StagingLoopErrors, CarriedPythonNumbersChangeOnce) {
  // i32 first, then f32: an error, as two tensors of different dtypes are.
  std::string e = errors_of(R"(def f(x: sg.f32["N"], y: sg.i32["N"]):
    s = 0
    for i in range(x.shape[0]):
        s = s + y[i]
        s = s + x[i]
    return s
)");
  EXPECT_NE(e.find("8:15: error: add: operands have different dtypes i32 and f32"), std::string::npos) << e;
  // A number i32 cannot hold stays i64 (NumPy 2 refuses it too).
  e = errors_of(R"(def f(y: sg.i32["N"]):
    s = 3000000000
    for i in range(y.shape[0]):
        s = s + y[i]
    return s
)");
  EXPECT_NE(e.find("7:15: error: add: operands have different dtypes i64 and i32"), std::string::npos) << e;
}

TEST(StagingLoopErrors, CarriedTupleThatChangesLength) {
  const std::string e = errors_of(R"(def f(n: sg.i64):
    state = (sg.zeros((), dtype=sg.i64), sg.zeros(()))
    while state[0] < n:
        state = (state[0] + 1, state[1], state[1])
    return state[0]
)");
  EXPECT_NE(e.find("6:5: error: variable 'state' is a tuple of 2 items before the loop and a tuple of 3 items after an "
                   "iteration of the staged while loop at line 6"),
            std::string::npos) << e;
  EXPECT_NE(e.find("must keep its length and keys"), std::string::npos) << e;
}

TEST(StagingLoopErrors, TestThatBecomesStagedAfterAnIteration) {
  const std::string e = errors_of(R"(def f(n: sg.i64):
    i = 0
    x = 0
    while x < 10:
        x = x + n
    return x
)");
  EXPECT_NE(e.find("7:5: error: the test `x < 10` of this while loop became known only at run time after 1 "
                   "iterations at compile time; start the loop variables as tensors"),
            std::string::npos) << e;
}

// A for target with no value before the loop, read after it: carried from its
// first iteration, with a defined flag checked where it is read.
TEST(StagingLoops, ForTargetReadAfterTheLoopIsCheckedAtRunTime) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64):
    s = 0
    for i in range(n):
        s = s + i
    return s + i
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u);
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
}

// AutoGraph's for_imbalanced: a key the body adds is in the dict from before the
// loop, with a flag that an iteration assigned it, checked once after the loop (a
// run that assigned it in no iteration stops there, as AutoGraph's does).
TEST(StagingLoops, ADictGainingAKeyInsideAStagedLoopHasItAfterTheLoop) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64, x: sg.f32):
    y = {}
    for i in range(n):
        if i > 2:
            y["a"] = x * i
    return y["a"]
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u) << ir::print(*r.ir);
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  // Reached through another name than the variable it had before the loop, the key
  // cannot be put in before the loop: refused, located.
  const std::string e = errors_of(R"(def f(n: sg.i64, x: sg.f32):
    y = {}
    z = [y]
    for i in range(n):
        z[0]["a"] = x
    return y["a"]
)");
  EXPECT_NE(e.find("8:9: error:"), std::string::npos) << e;
}

// AutoGraph's nested_fill: the items are inner lists stacked, of a length known only
// at run time; the list's item dim is its own (0 in the empty list before the loop),
// and each append reshapes the list to the item's dims.
TEST(StagingLoops, AListOfItemsWhoseLengthTheLoopMakes) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(m: sg.i32, n: sg.i32):
    mat = []
    for _ in range(m):
        row = []
        for j in range(n):
            row.append(j)
        mat.append(sg.stack(row))
    return sg.stack(mat)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  size_t reshapes = 0;
  for (const ir::Function& fn : r.ir->functions)
    for (const ir::Node& node : fn.nodes) reshapes += node.kind == ir::NodeKind::kOp && node.op == ops::OpId::Reshape;
  EXPECT_GE(reshapes, 1u) << ir::print(*r.ir);
}

TEST(StagingLoopErrors, ListPopInsideAStagedLoop) {
  // The body is staged once: a pop would run once at compile time, for every n.
  const std::string e = errors_of(R"(def f(n: sg.i64):
    l = [1, 2, 3, 4]
    s = 0
    for _ in range(n):
        s += l.pop()
    return s
)");
  EXPECT_NE(e.find("8:14: error: `l.pop()` changes a list made before the staged for loop at line 7, whose body is "
                   "staged once"),
            std::string::npos) << e;
}

TEST(StagingLoops, VariableFirstDefinedInsideTheLoopIsCheckedAtRunTime) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64):
    i = 0
    while i < n:
        last = i * 2
        i += 1
    return last
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u);
  EXPECT_EQ(r.result_type("f"), "i64[]");
}

// Assigned on some paths through an iteration only: carried from the start, so that
// an iteration that skips it keeps the previous one's value, as in Python.
TEST(StagingLoops, VariableFirstDefinedOnSomePathsOfTheLoopIsCarriedFromTheStart) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64):
    i = 0
    while i < n:
        if i > 2:
            last = i * 2
        i += 1
    return last
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Assert), 1u);
  EXPECT_NE(r.explained.find("variable 'last' is first assigned inside the loop: carried from the start"),
            std::string::npos) << r.explained;
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
}

// Read in an iteration before its assignment there, with no value before the loop.
TEST(StagingLoopErrors, VariableReadInTheLoopBeforeItsFirstAssignment) {
  const std::string e = errors_of(R"(def f(n: sg.i64):
    i = 0
    while i < n:
        s = last + 1
        last = i * 2
        i += 1
    return last
)");
  EXPECT_NE(e.find("7:13: error: name 'last' is not defined"), std::string::npos) << e;
}

// The message shows the part of a carried structure that differs.
TEST(StagingLoopErrors, ACarriedListThatChangesLength) {
  const std::string e = errors_of(R"(def f(n: sg.i64, x: sg.f32[2]):
    state = {"h": [x, x], "c": x}
    for i in range(n):
        state = {"h": [x, x, x], "c": x}
    return state["c"]
)");
  EXPECT_NE(e.find("6:5: error: `state['h']` is a list of 2 items before the loop and a list of 3 items after an "
                   "iteration of the staged for loop at line 6"),
            std::string::npos) << e;
}

TEST(StagingLoopErrors, DtypeThatChanges) {
  const std::string e = errors_of(R"(def f(n: sg.i64):
    x = sg.zeros((), dtype=sg.i64)
    while x < n:
        x = x + 0.5
    return x
)");
  EXPECT_NE(e.find("6:5: error: variable 'x' is i64 before the staged while loop at line 6 and f32 after an "
                   "iteration; its dtype must stay fixed"),
            std::string::npos) << e;
}

// A dim that changes across iterations becomes a fresh symbolic dim, said by
// --explain-staging; it stays relaxed through a later loop.
TEST(StagingLoops, ShapeThatChangesIsRelaxedAutomatically) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(n: sg.i64):
    v = sg.zeros((1,))
    while v.shape[0] < n:
        v = sg.concatenate([v, v])
    for i in range(n):
        v = sg.concatenate([v, sg.ones((1,))])
    return v
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[v#1]");
  EXPECT_NE(r.explained.find("variable 'v' changes dim 0 across iterations: carried with the symbolic dim v"),
            std::string::npos) << r.explained;
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
}

TEST(StagingLoopErrors, RankThatChanges) {
  const std::string e = errors_of(R"(def f(n: sg.i64):
    v = sg.zeros((1,))
    while v.shape[0] < n:
        v = sg.zeros((1, 1))
    return v
)");
  EXPECT_NE(e.find("6:5: error: variable 'v' changes rank in the staged while loop at line 6: f32[1] before the "
                   "loop, f32[1, 1] after an iteration; a value a staged loop carries keeps its rank"),
            std::string::npos) << e;
}

TEST(StagingLoopErrors, NonScalarTest) {
  const std::string e = errors_of(R"(def f(x: sg.f32[3]):
    while x > 0.0:
        x = x - 1.0
    return x
)");
  EXPECT_NE(e.find("5:11: error: the test of a staged `while` must be a scalar, got bool[3]; use sg.any or sg.all"),
            std::string::npos) << e;
}

TEST(StagingLoopErrors, AppendInAStagedIfOutsideALoop) {
  const std::string e = errors_of(R"(def f(x: sg.f32[3]):
    xs = []
    if sg.sum(x) > 0.0:
        xs.append(x)
    return x
)");
  EXPECT_NE(e.find("7:9: error: list 'xs' has 1 item in the then branch of the staged `if` at line 6 and 0 items in "
                   "the else branch; both paths must leave it with one length (a list appended to inside a staged "
                   "loop becomes a tensor list, which may grow)"),
            std::string::npos)
      << e;
}

TEST(StagingLoopErrors, ZipOfASymbolicTensorWithAListOfMixedNumbers) {
  const std::string e = errors_of(R"(def f(x: sg.f32["N"]):
    t = 0.0
    for w, v in zip([1, 2.5], x):
        t = t + w * v
    return t
)");
  EXPECT_NE(e.find("6:21: error: zip over a tensor whose first dim is known only at run time takes a static list of "
                   "numbers of one kind (all ints or all floats) or of tensors of one dtype and shape"),
            std::string::npos)
      << e;
}

TEST(StagingLoopErrors, BuiltinSumOfASymbolicFirstDimAsksForSgSum) {
  const std::string e = errors_of(R"(def f(x: sg.f32["N", 3]):
    return sum(x)
)");
  EXPECT_NE(e.find("5:12: error: sum() of a tensor whose first dim is known only at run time: use sg.sum(x, axis=0)"),
            std::string::npos)
      << e;
}

TEST(StagingLoopErrors, TensorListItemsOfDifferentTypes) {
  const std::string e = errors_of(R"(def f(xs: sg.f32["T", 3]):
    out = []
    for row in xs:
        out.append(row)
        out.append(row[0])
    return sg.stack(out)
)");
  EXPECT_NE(e.find("8:9: error: list 'out' holds items of type f32[3]; appending f32[] would change it"),
            std::string::npos) << e;
}

TEST(StagingLoopErrors, ReturnPathsThatFallThrough) {
  const std::string e = errors_of(R"(def f(x: sg.f32[3]):
    if sg.sum(x) > 0.0:
        return x
    x = x + 1.0
)");
  EXPECT_NE(e.find("4:5: error: function 'f' returns inside a staged `if` or loop on some paths but can reach its "
                   "end without a return on others"),
            std::string::npos) << e;
}

}  // namespace
}  // namespace sg::compiler
