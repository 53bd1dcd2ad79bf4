// Classes, lambdas, raise, try, del, global and nonlocal parse (SPEC §4); the
// stager decides what they mean.
#include <gtest/gtest.h>

#include "frontend/frontend_test_util.h"

namespace sg::compiler::testing {
namespace {

TEST(ParserLang, ClassDefinitions) {
  EXPECT_EQ(parse_dump("class A:\n    \"\"\"Doc.\"\"\"\n    n = 1\n    def f(self, x):\n        return x\n"),
            "(class A () doc=\"Doc.\" [(= n 1) (def f (self x) [(return x)])])\n");
  EXPECT_EQ(parse_dump("@dataclasses.dataclass(frozen=True)\nclass P(Base):\n    x: int\n    y: float = 0.0\n"),
            "(class @(call (. dataclasses dataclass) (= frozen True)) P (Base) [(ann x int _) (ann y float 0.0)])\n");
  EXPECT_EQ(parse_dump("class E(ValueError): pass\n"), "(class E (ValueError) [pass])\n");
}

TEST(ParserLang, Lambdas) {
  EXPECT_EQ(expr_dump("lambda: 1"), "(lambda () 1)");
  EXPECT_EQ(expr_dump("lambda a, b=(1, 2): a + b"), "(lambda (a b=(tuple 1 2)) (+ a b))");
  EXPECT_EQ(expr_dump("f(lambda x: x if x else y, key=lambda v: -v)"),
            "(call f (lambda (x) (if x x y)) (= key (lambda (v) (neg v))))");
}

TEST(ParserLang, RaiseTryDelGlobalNonlocal) {
  EXPECT_EQ(parse_dump("raise\nraise ValueError('no')\nraise E from e\n"),
            "raise\n(raise (call ValueError \"no\"))\n(raise E from e)\n");
  EXPECT_EQ(parse_dump("try:\n    x = 1\nexcept (A, B) as e:\n    pass\nexcept:\n    raise\nelse:\n    y = 2\n"
                       "finally:\n    z = 3\n"),
            "(try [(= x 1)] (except (tuple A B) as e [pass]) (except _ [raise]) (else [(= y 2)]) (finally [(= z 3)]))\n");
  EXPECT_EQ(parse_dump("try: pass\nfinally: pass\n"), "(try [pass] (finally [pass]))\n");
  EXPECT_EQ(parse_dump("del x, y[0], z.a\nglobal g, h\nnonlocal n\n"),
            "(del x ([] y 0) (. z a))\n(global g h)\n(nonlocal n)\n");
}

TEST(ParserLang, Errors) {
  EXPECT_EQ(parse_dump("try:\n    pass\nx = 1\n"), "ERRORS\n3:1: expected 'except' or 'finally' after the 'try' block on line 1\n");
}

}  // namespace
}  // namespace sg::compiler::testing
