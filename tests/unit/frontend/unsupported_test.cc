// Constructs outside the subset (SPEC §4): each a clear error at its keyword, and
// parsing goes on so that one run reports all of them.
#include <gtest/gtest.h>

#include "frontend/frontend_test_util.h"

namespace sg::compiler::testing {
namespace {

std::string errors_of(const std::string& text) {
  ParseResult r = parse_source(text);
  EXPECT_EQ(r.module, nullptr);
  return r.locations;
}

TEST(Unsupported, GoldenTextForWith) {
  ParseResult r = parse_source("import stagegraph as sg\n\ndef f(x):\n    with x:\n        return x\n");
  EXPECT_EQ(r.module, nullptr);
  EXPECT_EQ(r.errors,
            "model.py:4:5: error: 'with' statements are not supported in staged programs\n"
            "        with x:\n"
            "        ^~~~\n");
}

TEST(Unsupported, CompoundStatements) {
  EXPECT_EQ(errors_of("def f(x):\n"
                      "    with open(x) as fh:\n"
                      "        y = 1\n"
                      "    class A:\n"
                      "        def g(self): pass\n"
                      "    try: pass\n"
                      "    finally: pass\n"
                      "    async def h(): pass\n"
                      "    return x\n"),
            "2:5: 'with' statements are not supported in staged programs\n"
            "8:5: 'async' statements are not supported in staged programs\n");
}

// global, nonlocal, del, raise, class, try and lambda parse (SPEC §4); yield does not.
TEST(Unsupported, SimpleStatements) {
  EXPECT_EQ(errors_of("def f(x):\n"
                      "    global g\n"
                      "    nonlocal n\n"
                      "    del x[0]; y = 1\n"
                      "    raise ValueError('no')\n"
                      "    yield x\n"),
            "6:5: 'yield' expressions are not supported in staged programs\n");
}

TEST(Unsupported, Expressions) {
  EXPECT_EQ(errors_of("y = x\n"
                      "z = await g()\n"
                      "w = x if (yield) else 1\n"
                      "s = {1, 2}\n"
                      "d = {k: v for k, v in items}\n"
                      "t = {k for k in keys}\n"
                      "u = sum(a for a in xs)\n"
                      "v = (a for a in xs)\n"
                      "e = {**base, 'k': 1}\n"),
            "2:5: 'await' expressions are not supported in staged programs\n"
            "3:11: 'yield' expressions are not supported in staged programs\n"
            "4:5: set literals are not supported in staged programs\n"
            "6:5: set comprehensions are not supported in staged programs\n"
            "9:6: dict unpacking ('**') is not supported in staged programs\n");
}

// *args, **kwargs, keyword-only parameters, `*xs`/`**kw` in calls and `*xs` in
// displays are supported; positional-only parameters and starred targets are not.
TEST(Unsupported, StarredParametersArgumentsAndTargets) {
  EXPECT_EQ(errors_of("def f(a, *args, b=1, **kwargs):\n"
                      "    pass\n"
                      "def g(a, *, b):\n"
                      "    pass\n"
                      "def h(a, /, b):\n"
                      "    pass\n"
                      "f(*xs, **kw)\n"
                      "first, *rest = xs\n"
                      "ys = [*xs, 1]\n"),
            "5:10: positional-only parameters ('/') are not supported in staged programs\n"
            "8:8: starred assignment targets ('a, *rest = ...') are not supported in staged programs\n");
}

TEST(Unsupported, LoopElseClauses) {
  EXPECT_EQ(errors_of("def f(n):\n"
                      "    while n > 0:\n"
                      "        n -= 1\n"
                      "    else:\n"
                      "        n = 5\n"
                      "    for i in range(n):\n"
                      "        pass\n"
                      "    else: pass\n"
                      "    return n\n"),
            "4:5: 'while ... else' is not supported in staged programs\n"
            "8:5: 'for ... else' is not supported in staged programs\n");
}

TEST(Unsupported, ImportForms) {
  EXPECT_EQ(errors_of("from . import x\nfrom stagegraph import *\n"),
            "1:6: relative imports are not supported in staged programs\n"
            "2:24: 'from ... import *' is not supported in staged programs\n");
}

TEST(Unsupported, LexicalOnesStopTheParse) {
  EXPECT_EQ(errors_of("def f(x):\n    print(f'{x')\n    try: pass\n"), "2:13: f-string: expecting '}'\n");
  EXPECT_EQ(errors_of("if (n := 3) > 2:\n    pass\n"),
            "1:7: assignment expressions (':=') are not supported in staged programs\n");
}

TEST(Unsupported, ASyntaxErrorAfterAnUnsupportedConstructIsStillReported) {
  EXPECT_EQ(errors_of("with g: pass\nx = (1\n"), "1:1: 'with' statements are not supported in staged programs\n"
                                             "2:5: '(' was never closed\n");
}

}  // namespace
}  // namespace sg::compiler::testing
