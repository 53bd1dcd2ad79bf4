// Python as people write it (SPEC §1, §4): `import math`, generator expressions
// and dict comprehensions, *args/**kwargs, sorted and min/max with key=. Static
// results are printed at compile time and compared with what CPython prints.
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

std::string program(const std::string& body) {
  return "import math\nimport stagegraph as sg\n\n\n@sg.function\ndef f(x: sg.f32[4], s: sg.f32):\n" + body;
}

TEST(StagingPythonIdioms, MathOnStaticNumbersFollowsCPython) {
  auto r = stage_source(program(
      "    print(math.pi, math.e, math.inf, -math.inf, math.tau)\n"
      "    print(math.sqrt(2), math.log(8, 2), math.exp(1), math.floor(-2.5), math.ceil(2.1), math.trunc(-2.7))\n"
      "    print(math.hypot(3, 4), math.isnan(math.nan), math.isinf(math.inf), math.gcd(12, 18), math.factorial(5))\n"
      "    print(math.isclose(0.1 + 0.2, 0.3), math.degrees(math.pi), math.fmod(7, 3), math.copysign(2, -0.0))\n"
      "    return x * math.pi\n"));
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed,
            "3.141592653589793 2.718281828459045 inf -inf 6.283185307179586\n"
            "1.4142135623730951 3.0 2.718281828459045 -3 3 -2\n"
            "5.0 True True 6 120\n"
            "True 180.0 1.0 -2.0\n");
}

TEST(StagingPythonIdioms, MathErrorsAreCPythonsAtTheCall) {
  EXPECT_EQ(stage_source(program("    return x * math.sqrt(-1.0)\n")).locations(),
            "7:16: error: math domain error\n");
  EXPECT_EQ(stage_source(program("    return x * math.exp(1000)\n")).locations(),
            "7:16: error: math range error\n");
  EXPECT_EQ(stage_source(program("    return x * math.floor(math.inf)\n")).locations(),
            "7:16: error: cannot convert float infinity to integer\n");
  EXPECT_EQ(stage_source(program("    return math.sqrt(x)\n")).locations(),
            "7:22: error: math.sqrt() takes a number or a scalar; this is a tensor of rank 1 (use the sg op of "
            "the same name, elementwise)\n");
  EXPECT_EQ(stage_source(program("    return x * math.atan(s)\n")).locations().substr(0, 79),
            "7:16: error: math.atan() of a value known only at run time is not supported (it");
  EXPECT_EQ(stage_source(program("    return x * math.frexp(s)\n")).locations(),
            "7:16: error: module 'math' has no attribute 'frexp' that a staged program may use\n");
}

TEST(StagingPythonIdioms, MathOnAStagedScalarIsAnOp) {
  // Each result stands for CPython's float or int: beside a tensor, the tensor's dtype.
  auto r = stage_source(program("    h = x.astype(sg.f16)\n"
                                "    return math.sqrt(s) + math.floor(s * 2.0), math.log(s, 10) * h, math.ceil(s) + h\n"));
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[]");
  EXPECT_EQ(r.result_type("f", 1), "f16[4]");
  EXPECT_EQ(r.result_type("f", 2), "f16[4]");
}

TEST(StagingPythonIdioms, GeneratorsAndDictComprehensions) {
  auto r = stage_source(program(
      "    squares = {k: k * k for k in range(4) if k != 2}\n"
      "    print(squares, tuple(v for v in squares.values()), sum(k for k in squares))\n"
      "    print(dict((str(k), k) for k in (1, 2)), max(len(w) for w in ['a', 'abc']), any(k > 2 for k in squares))\n"
      "    return sum(x * k for k in range(3))\n"));
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed,
            "{0: 0, 1: 1, 3: 9} (0, 1, 9) 4\n"
            "{'1': 1, '2': 2} 3 True\n");
  EXPECT_EQ(r.result_type("f"), "f32[4]");
}

TEST(StagingPythonIdioms, StarArgsAndKeywordArguments) {
  auto r = stage_source(
      "import stagegraph as sg\n\n\n"
      "def g(a, *rest, scale=1, **named):\n"
      "    print(a, rest, scale, named)\n"
      "    return a\n\n\n"
      "@sg.function\n"
      "def f(x: sg.f32[4]):\n"
      "    g(1, 2, 3, scale=4, z=5)\n"
      "    g(*[1, 2], **{'scale': 3})\n"
      "    h = lambda *v, **k: (v, k)\n"
      "    print(h(1, *(2, 3), k=4), [*range(2), *'ab'])\n"
      "    return x * g(1)\n");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed,
            "1 (2, 3) 4 {'z': 5}\n"
            "1 (2,) 3 {}\n"
            "((1, 2, 3), {'k': 4}) [0, 1, 'a', 'b']\n"
            "1 () 1 {}\n");
}

TEST(StagingPythonIdioms, ArgumentBindingErrorsAreCPythons) {
  auto call = [](const std::string& def, const std::string& args) {
    return stage_source("import stagegraph as sg\n\n\ndef g(" + def + "):\n    return 1\n\n\n"
                        "@sg.function\ndef f(x: sg.f32[4]):\n    return x * g(" + args + ")\n")
        .locations();
  };
  EXPECT_EQ(call("a, *, b", "1, 2"), "10:16: error: g() takes 1 positional arguments but 2 were given\n");
  EXPECT_EQ(call("a, *, b", "1"), "10:16: error: g() missing required keyword-only argument 'b'\n");
  EXPECT_EQ(call("a, **kw", "1, a=2"), "10:16: error: g() got multiple values for argument 'a'\n");
  EXPECT_EQ(call("a", "*[1], **{'b': 2}"), "10:16: error: g() got an unexpected keyword argument 'b'\n");
  EXPECT_EQ(call("a", "**{1: 2}"), "10:20: error: keywords must be strings, got 1\n");
  EXPECT_EQ(stage_source("import stagegraph as sg\n\n\n@sg.function\ndef f(*xs):\n    return 1\n").locations(),
            "5:8: error: an entry point takes named, annotated inputs; '*xs' is allowed in the functions it calls\n");
}

TEST(StagingPythonIdioms, SortedAndMinMaxWithKey) {
  auto r = stage_source(program(
      "    d = {'b': 2, 'a': 3, 'c': 1}\n"
      "    print(sorted(d), sorted(d, key=d.get), sorted(d, key=lambda k: d[k], reverse=True))\n"
      "    print(sorted([(1, 'b'), (0, 'z'), (1, 'a')]), sorted([3, 1, 2], reverse=True))\n"
      "    print(sorted(['bb', 'a', 'cc', 'd'], key=len, reverse=True), min(d, key=d.get), max([], default=7))\n"
      "    print(max([-4, 3, -1], key=abs), min([2, -2], key=abs), max('ab', 'ba', key=lambda w: w[1]))\n"
      "    names = ['bb', 'a', 'ccc']\n"
      "    names.sort(key=len, reverse=True)\n"
      "    ranks = [3, 1, 2]\n"
      "    ranks.sort()\n"
      "    ranks.reverse()\n"
      "    print(names, ranks)\n"
      "    return x\n"));
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.printed,
            "['a', 'b', 'c'] ['c', 'b', 'a'] ['a', 'b', 'c']\n"
            "[(0, 'z'), (1, 'a'), (1, 'b')] [3, 2, 1]\n"
            "['bb', 'cc', 'a', 'd'] c 7\n"
            "-4 2 ab\n"
            "['ccc', 'bb', 'a'] [3, 2, 1]\n");
  EXPECT_EQ(stage_source(program("    return x[sorted([s, s])[0]]\n")).locations().substr(0, 69),
            "7:14: error: sorted() compares values known only at run time; the ord");
  EXPECT_EQ(stage_source(program("    return max([x, x], key=lambda t: t.sum())\n")).locations().substr(0, 80),
            "7:12: error: max(key=...): the key of an item is known only at run time; the ord");
}

}  // namespace
}  // namespace sg::compiler

namespace sg::compiler {
namespace {

// The deepest expression the parser lets through, staged on the smallest staging
// stack: it compiles, or stops with a located error; it never overflows the stack.
TEST(StagingDepth, TheDeepestExpressionOnTheSmallestStack) {
  std::string sum = "x";
  for (int i = 1; i < 2999; ++i) sum += i % 2 ? " + x" : " * 1.0";
  StageOptions options;
  options.stack_bytes = size_t(8) << 20;
  auto r = testing::stage_source("import stagegraph as sg\n\n\n@sg.function\ndef f(x: sg.f32[4]):\n    return " + sum + "\n",
                                 options);
  if (!r.ir) {
    EXPECT_NE(r.locations().find("nested too deeply for the staging stack"), std::string::npos) << r.locations();
  }
}

}  // namespace
}  // namespace sg::compiler
