// Statements of the subset (SPEC §1, §4), dumped as s-expressions one a line.
#include <gtest/gtest.h>

#include "frontend/frontend_test_util.h"

namespace sg::compiler::testing {
namespace {

TEST(ParserStmt, Assignments) {
  EXPECT_EQ(parse_dump("x = 1\na = b = c\nx, y = y, x\n[p, (q, r)] = t\nx[i, 1:] = v\nself.w = 2\n"),
            "(= x 1)\n"
            "(= a b c)\n"
            "(= (tuple x y) (tuple y x))\n"
            "(= (list p (tuple q r)) t)\n"
            "(= ([] x (tuple i (: 1 _ _))) v)\n"
            "(= (. self w) 2)\n");
}

TEST(ParserStmt, AugmentedAndAnnotatedAssignments) {
  EXPECT_EQ(parse_dump("x += 1\nx -= 1\nx *= 1\nx /= 1\nx //= 1\nx %= 1\nx **= 1\nx @= w\n"
                       "x &= 1\nx |= 1\nx ^= 1\nx >>= 1\nx <<= 1\nx[0] += 1\n"),
            "(+= x 1)\n(-= x 1)\n(*= x 1)\n(/= x 1)\n(//= x 1)\n(%= x 1)\n(**= x 1)\n(@= x w)\n"
            "(&= x 1)\n(|= x 1)\n(^= x 1)\n(>>= x 1)\n(<<= x 1)\n(+= ([] x 0) 1)\n");
  EXPECT_EQ(parse_dump("n: int = 3\nm: sg.f32[4]\n"), "(ann n int 3)\n(ann m ([] (. sg f32) 4) _)\n");
}

TEST(ParserStmt, IfElifElse) {
  EXPECT_EQ(parse_dump("if a:\n  x = 1\nelif b:\n  x = 2\nelif c: x = 3\nelse:\n  pass\n"),
            "(if a [(= x 1)] [(if b [(= x 2)] [(if c [(= x 3)] [pass])])])\n");
  EXPECT_EQ(parse_dump("if a: x = 1; y = 2\n"), "(if a [(= x 1) (= y 2)] [])\n");
}

TEST(ParserStmt, Loops) {
  EXPECT_EQ(parse_dump("while i < n:\n  i += 1\n  if i > 3:\n    break\n  continue\n"),
            "(while (< i n) [(+= i 1) (if (> i 3) [break] []) continue])\n");
  EXPECT_EQ(parse_dump("for i, (a, b) in enumerate(zip(p, q)):\n  s = s + a\n"),
            "(for (tuple i (tuple a b)) (call enumerate (call zip p q)) [(= s (+ s a))])\n");
  EXPECT_EQ(parse_dump("for x in a, b:\n  pass\n"), "(for x (tuple a b) [pass])\n");
  EXPECT_EQ(parse_dump("for t in range(xs.shape[0]): h = f(h)\n"),
            "(for t (call range ([] (. xs shape) 0)) [(= h (call f h))])\n");
}

TEST(ParserStmt, SimpleStatements) {
  EXPECT_EQ(parse_dump("return\nreturn x\nreturn x, y\nreturn {'a': x}\npass; pass;\n"
                       "assert x > 0\nassert x, 'msg'\nprint(x)\n"),
            "return\n(return x)\n(return (tuple x y))\n(return (dict (\"a\" x)))\npass\npass\n"
            "(assert (> x 0) _)\n(assert x \"msg\")\n(expr (call print x))\n");
}

TEST(ParserStmt, FunctionDefinitions) {
  EXPECT_EQ(parse_dump("@sg.function\n"
                       "def rnn(xs: sg.f32['T', 16], h0: sg.f32[32], n=3, m: int = 4) -> sg.f32[32]:\n"
                       "    \"\"\"Runs the cell.\"\"\"\n"
                       "    h = h0\n"
                       "    def cell(a, b):\n"
                       "        return a + b\n"
                       "    return cell(h, n)\n"),
            "(def @(. sg function) rnn (xs:([] (. sg f32) (tuple \"T\" 16)) h0:([] (. sg f32) 32) n=3 m:int=4)"
            " -> ([] (. sg f32) 32) doc=\"Runs the cell.\""
            " [(= h h0) (def cell (a b) [(return (+ a b))]) (return (call cell h n))])\n");
  EXPECT_EQ(parse_dump("@a.b(1, k=2)\n@c\ndef f(x,): return x\n"),
            "(def @(call (. a b) 1 (= k 2)) @c f (x) [(return x)])\n");
  EXPECT_EQ(parse_dump("def f():\n    'only a docstring'\n"), "(def f () doc=\"only a docstring\" [])\n");
}

TEST(ParserStmt, Imports) {
  EXPECT_EQ(parse_dump("import stagegraph as sg\nimport os.path, numpy as np\n"
                       "from stagegraph import f32, relu as r\nfrom stagegraph import (a,\n  b,)\n"),
            "(import stagegraph as sg)\n(import os.path numpy as np)\n"
            "(from stagegraph import f32 relu as r)\n(from stagegraph import a b)\n");
}

TEST(ParserStmt, ModuleDocstringIsDroppedAndCommentsIgnored) {
  EXPECT_EQ(parse_dump("\"\"\"A model.\n\nMore text.\"\"\"\n# comment\n\nN = 4  # trailing\n"), "(= N 4)\n");
}

TEST(ParserStmt, StatementSpans) {
  ParseResult r = parse_source("def f(x):\n    if x > 0:\n        return x\n    return -x\n");
  ASSERT_TRUE(r.module) << r.errors;
  const Stmt& def = *r.module->body[0];
  EXPECT_EQ(def.func->name_span.line, 1u);
  EXPECT_EQ(def.func->name_span.col, 5u);
  EXPECT_EQ(def.func->params[0].span.col, 7u);
  const Stmt& if_stmt = *def.func->body[0];
  EXPECT_EQ(if_stmt.span.line, 2u);
  EXPECT_EQ(if_stmt.span.col, 5u);
  EXPECT_EQ(if_stmt.span.end_col, 13u);  // the header: 'if x > 0'
  const Stmt& ret = *def.func->body[1];
  EXPECT_EQ(ret.span.line, 4u);
  EXPECT_EQ(ret.span.col, 5u);
  EXPECT_EQ(ret.span.end_col, 14u);
}

TEST(ParserStmt, AugmentedAssignmentKeepsItsOperator) {
  ParseResult r = parse_source("h @= w\ntotal //= 2\n");
  ASSERT_TRUE(r.module) << r.errors;
  const Stmt& matmul = *r.module->body[0];
  EXPECT_EQ(matmul.op_span.col, 3u);
  EXPECT_EQ(matmul.op_span.end_col, 5u);
  EXPECT_EQ(matmul.span.col, 1u);
  EXPECT_EQ(r.module->body[1]->op_span.col, 7u);
  EXPECT_EQ(r.module->body[1]->op_span.end_col, 10u);
}

TEST(ParserStmt, SyntaxErrors) {
  EXPECT_EQ(parse_dump("if x > 0\n    y = 1\n"), "ERRORS\n1:9: expected ':' after the if condition, found end of line\n");
  EXPECT_EQ(parse_dump("x = 1\n    y = 2\n"), "ERRORS\n2:1: unexpected indent\n");
  EXPECT_EQ(parse_dump("if x:\n        y = 1\n    z = 2\n"),
            "ERRORS\n3:1: unindent does not match any outer indentation level\n");
  EXPECT_EQ(parse_dump("if x:\ny = 1\n"),
            "ERRORS\n2:1: expected an indented block after the 'if' statement on line 1\n");
  EXPECT_EQ(parse_dump("s = 'abc\n"), "ERRORS\n1:5: unterminated string\n");
  EXPECT_EQ(parse_dump("x = $\n"), "ERRORS\n1:5: invalid character '$'\n");
  EXPECT_EQ(parse_dump("x = 1 2\ny = (\n"), "ERRORS\n1:7: expected a newline or ';' after the statement, found '2'\n");
  EXPECT_EQ(parse_dump("else:\n  pass\n"), "ERRORS\n1:1: 'else' without a matching statement before it\n");
  EXPECT_EQ(parse_dump("f() = 1\n(a, 2) = t\nx + 1 += 2\n"),
            "ERRORS\n1:1: cannot assign to a function call\n2:5: cannot assign to a literal\n"
            "3:1: cannot assign to an expression\n");
  EXPECT_EQ(parse_dump("a, b += 1\n"), "ERRORS\n1:1: a tuple or list cannot be the target of an augmented assignment\n");
  EXPECT_EQ(parse_dump("def f(a=1, b):\n  pass\n"),
            "ERRORS\n1:12: parameter 'b' without a default follows a parameter with a default\n");
  EXPECT_EQ(parse_dump("def f(a, a):\n  pass\n"), "ERRORS\n1:10: duplicate parameter 'a' in the function definition\n");
  EXPECT_EQ(parse_dump("@sg.function\nx = 1\n"), "ERRORS\n2:1: expected 'def' after the decorator, found name 'x'\n");
  EXPECT_EQ(parse_dump("f(x, x=1, x=2)\n"), "ERRORS\n1:11: keyword argument repeated: x\n");
}

}  // namespace
}  // namespace sg::compiler::testing
