// Expressions: Python's precedence and associativity, seen through an s-expression dump.
#include <gtest/gtest.h>

#include "frontend/frontend_test_util.h"

namespace sg::compiler::testing {
namespace {

TEST(ParserExpr, ArithmeticPrecedence) {
  EXPECT_EQ(expr_dump("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr_dump("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr_dump("a @ b + c"), "(+ (@ a b) c)");
  EXPECT_EQ(expr_dump("a / b // c % d * e"), "(* (% (// (/ a b) c) d) e)");
  EXPECT_EQ(expr_dump("(a + b) * c"), "(* (+ a b) c)");
}

TEST(ParserExpr, PowerIsRightAssociativeAndBindsTighterThanUnaryOnItsLeft) {
  EXPECT_EQ(expr_dump("-x**2"), "(neg (** x 2))");
  EXPECT_EQ(expr_dump("a**b**c"), "(** a (** b c))");
  EXPECT_EQ(expr_dump("2**-1"), "(** 2 (neg 1))");
  EXPECT_EQ(expr_dump("-a * b"), "(* (neg a) b)");
  EXPECT_EQ(expr_dump("~+-a"), "(~ (pos (neg a)))");
  EXPECT_EQ(expr_dump("x.y**2"), "(** (. x y) 2)");
}

TEST(ParserExpr, BitwiseAndShiftLevels) {
  EXPECT_EQ(expr_dump("a | b ^ c & d << e + f"), "(| a (^ b (& c (<< d (+ e f)))))");
  EXPECT_EQ(expr_dump("a >> 1 << 2"), "(<< (>> a 1) 2)");
}

TEST(ParserExpr, ComparisonsChainAndTakeTwoWordOperators) {
  EXPECT_EQ(expr_dump("a < b"), "(< a b)");
  EXPECT_EQ(expr_dump("0 <= i < n"), "(cmp 0 <= i < n)");
  EXPECT_EQ(expr_dump("a is not None"), "(is not a None)");
  EXPECT_EQ(expr_dump("a not in b"), "(not in a b)");
  EXPECT_EQ(expr_dump("a in b == c"), "(cmp a in b == c)");
  EXPECT_EQ(expr_dump("a + 1 > b | c"), "(> (+ a 1) (| b c))");
}

TEST(ParserExpr, BooleanOperatorsAndNot) {
  EXPECT_EQ(expr_dump("a or b and c"), "(or a (and b c))");
  EXPECT_EQ(expr_dump("a and b and c"), "(and a b c)");
  EXPECT_EQ(expr_dump("not a == b"), "(not (== a b))");
  EXPECT_EQ(expr_dump("not not a or b"), "(or (not (not a)) b)");
}

TEST(ParserExpr, ConditionalExpression) {
  EXPECT_EQ(expr_dump("a if c else b"), "(if c a b)");
  EXPECT_EQ(expr_dump("a if c else b if d else e"), "(if c a (if d b e))");
  EXPECT_EQ(expr_dump("x + 1 if a or b else -x"), "(if (or a b) (+ x 1) (neg x))");
}

TEST(ParserExpr, Atoms) {
  EXPECT_EQ(expr_dump("(1, 2.5, 'a' \"b\", True, False, None, ...)"),
            "(tuple 1 2.5 \"ab\" True False None ...)");
  EXPECT_EQ(expr_dump("()"), "(tuple)");
  EXPECT_EQ(expr_dump("(x,)"), "(tuple x)");
  EXPECT_EQ(expr_dump("(x)"), "x");
  EXPECT_EQ(expr_dump("[]"), "(list)");
  EXPECT_EQ(expr_dump("[1, [2], ]"), "(list 1 (list 2))");
  EXPECT_EQ(expr_dump("{}"), "(dict)");
  EXPECT_EQ(expr_dump("{'a': x, 'b': y + 1,}"), "(dict (\"a\" x) (\"b\" (+ y 1)))");
  EXPECT_EQ(expr_dump("x, y"), "(tuple x y)");
  EXPECT_EQ(expr_dump("x,"), "(tuple x)");
}

TEST(ParserExpr, CallsWithPositionalAndKeywordArguments) {
  EXPECT_EQ(expr_dump("f()"), "(call f)");
  EXPECT_EQ(expr_dump("sg.reshape(x, (n, -1), order='C',)"),
            "(call (. sg reshape) x (tuple n (neg 1)) (= order \"C\"))");
  EXPECT_EQ(expr_dump("f(a)(b)"), "(call (call f a) b)");
  EXPECT_EQ(expr_dump("sg.f32['T', 16]"), "([] (. sg f32) (tuple \"T\" 16))");
}

TEST(ParserExpr, SubscriptsWithSlicesEllipsisAndNone) {
  EXPECT_EQ(expr_dump("x[i]"), "([] x i)");
  EXPECT_EQ(expr_dump("x[i, j]"), "([] x (tuple i j))");
  EXPECT_EQ(expr_dump("x[i,]"), "([] x (tuple i))");
  EXPECT_EQ(expr_dump("x[:]"), "([] x (: _ _ _))");
  EXPECT_EQ(expr_dump("x[1:n]"), "([] x (: 1 n _))");
  EXPECT_EQ(expr_dump("x[::-1]"), "([] x (: _ _ (neg 1)))");
  EXPECT_EQ(expr_dump("x[a:b:c, ..., None]"), "([] x (tuple (: a b c) ... None))");
  EXPECT_EQ(expr_dump("x[:, 0]"), "([] x (tuple (: _ _ _) 0))");
  EXPECT_EQ(expr_dump("x[()]"), "([] x (tuple))");
  EXPECT_EQ(expr_dump("x.shape[0]"), "([] (. x shape) 0)");
}

TEST(ParserExpr, ListComprehensionsWithSeveralForsAndIfs) {
  EXPECT_EQ(expr_dump("[x * 2 for x in xs]"), "(listcomp (* x 2) (for x xs))");
  EXPECT_EQ(expr_dump("[a + b for a, b in zip(p, q) if a if b > 0 for c in r]"),
            "(listcomp (+ a b) (for (tuple a b) (call zip p q) (if a) (if (> b 0))) (for c r))");
}

TEST(ParserExpr, NodeSpansCoverTheExpression) {
  ParseResult r = parse_source("y = foo(a, b=1) + x[2]\n");
  ASSERT_TRUE(r.module) << r.errors;
  const Expr& sum = *r.module->body[0]->value;
  EXPECT_EQ(sum.span.col, 5u);
  EXPECT_EQ(sum.span.end_col, 23u);
  EXPECT_EQ(sum.a->span.col, 5u);   // the call
  EXPECT_EQ(sum.a->span.end_col, 16u);
  EXPECT_EQ(sum.a->keywords[0].span.col, 12u);
  EXPECT_EQ(sum.b->span.col, 19u);  // the subscript
}

TEST(ParserExpr, OperatorsKeepTheirTokenSpans) {
  ParseResult r = parse_source("h = x @ w ** 2\nc = 0 <= i is not n\n");
  ASSERT_TRUE(r.module) << r.errors;
  const Expr& matmul = *r.module->body[0]->value;
  ASSERT_EQ(matmul.op_spans.size(), 1u);
  EXPECT_EQ(matmul.op_spans[0].line, 1u);
  EXPECT_EQ(matmul.op_spans[0].col, 7u);
  EXPECT_EQ(matmul.op_spans[0].end_col, 8u);
  EXPECT_EQ(matmul.span.col, 5u);  // the expression still starts at its left operand
  ASSERT_EQ(matmul.b->op_spans.size(), 1u);
  EXPECT_EQ(matmul.b->op_spans[0].col, 11u);  // `**`
  EXPECT_EQ(matmul.b->op_spans[0].end_col, 13u);
  const Expr& cmp = *r.module->body[1]->value;
  ASSERT_EQ(cmp.op_spans.size(), 2u);
  EXPECT_EQ(cmp.op_spans[0].col, 7u);  // `<=`
  EXPECT_EQ(cmp.op_spans[0].end_col, 9u);
  EXPECT_EQ(cmp.op_spans[1].col, 12u);  // `is not`, both words
  EXPECT_EQ(cmp.op_spans[1].end_col, 18u);
}

TEST(ParserExpr, SyntaxErrorsStopAtTheFirst) {
  EXPECT_EQ(expr_dump("f(a b)"), "ERRORS 2:5: expected ',' or ')' in the argument list, found name 'b'\n");
  EXPECT_EQ(expr_dump("a + * b"), "ERRORS 2:5: expected an expression, found '*'\n");
  EXPECT_EQ(expr_dump("f(a=1, b)"), "ERRORS 2:8: positional argument follows keyword argument\n");
  EXPECT_EQ(expr_dump("f(a.b=1)"), "ERRORS 2:6: expected a parameter name before '=' in the keyword argument\n");
  EXPECT_EQ(expr_dump("a if b"), "ERRORS 2:7: expected 'else' in the conditional expression, found end of line\n");
  EXPECT_EQ(expr_dump("x."), "ERRORS 2:3: expected an attribute name after '.', found end of line\n");
}

}  // namespace
TEST(ParserExpr, ComprehensionsOfEveryKind) {
  EXPECT_EQ(expr_dump("{k: v * 2 for k, v in d if v}"), "(dictcomp k (* v 2) (for (tuple k v) d (if v)))");
  EXPECT_EQ(expr_dump("(x for x in xs)"), "(genexp x (for x xs))");
  EXPECT_EQ(expr_dump("sum(x * x for x in xs if x)"), "(call sum (genexp (* x x) (for x xs (if x))))");
  EXPECT_EQ(expr_dump("dict((k, v) for k in a for v in b)"), "(call dict (genexp (tuple k v) (for k a) (for v b)))");
}

TEST(ParserExpr, StarredArgumentsAndDisplays) {
  EXPECT_EQ(expr_dump("f(a, *xs, k=1, **kw)"), "(call f a (* xs) (= k 1) (** kw))");
  EXPECT_EQ(expr_dump("[*xs, 1]"), "(list (* xs) 1)");
  EXPECT_EQ(expr_dump("lambda a, *r, k=2, **o: a"), "(lambda (a *r kw:k=2 **o) a)");
  EXPECT_EQ(expr_dump("lambda *, k: k"), "(lambda (kw:k) k)");
}

// Chains nest without recursing in the parser; their height is bounded as
// CPython bounds it, with the error at the link that goes past the bound.
TEST(ParserExpr, ChainsDeeperThanTheBoundAreLocatedErrors) {
  auto chain = [](int terms, const std::string& link) {
    std::string out = "a";
    for (int i = 1; i < terms; ++i) out += link;
    return out;
  };
  const std::string too_deep = ": expression is nested too deeply: more than 3000 levels";
  auto error_of = [&](const std::string& text, const std::string& at) {
    return expr_dump(text).substr(0, at.size() + too_deep.size());
  };
  // The 3,000th '+' (column 3 + 4 * 2999) makes the tree 3,001 levels deep.
  EXPECT_EQ(error_of(chain(5000, " + a"), "ERRORS 2:11999"), "ERRORS 2:11999" + too_deep);
  EXPECT_EQ(error_of(chain(100000, ".b"), "ERRORS 2:6000"), "ERRORS 2:6000" + too_deep);
  EXPECT_EQ(error_of(chain(5000, "[0]"), "ERRORS 2:8999"), "ERRORS 2:8999" + too_deep);
  // A bracketed chain on the left counts: 2,000 levels inside, the 1,001st link outside.
  const std::string nested = "(" + chain(2000, " + a") + ")" + chain(1500, " + a").substr(1);
  EXPECT_EQ(error_of(nested, "ERRORS 2:12001"), "ERRORS 2:12001" + too_deep);
  EXPECT_EQ(expr_dump(chain(2999, ".b")).substr(0, 6), "(. (. ");
}

}  // namespace sg::compiler::testing
