// The body of `if __name__ == "__main__":` holds eager-mode demos in any Python;
// the parser keeps the guard and skips its body without tokenizing it.
#include <gtest/gtest.h>

#include "frontend/frontend_test_util.h"

namespace sg::compiler::testing {
namespace {

TEST(MainGuard, BodyWithArbitraryPythonIsSkipped) {
  EXPECT_EQ(parse_dump("import stagegraph as sg\n"
                       "\n"
                       "@sg.function\n"
                       "def f(x: sg.f32[4]):\n"
                       "    return x + 1\n"
                       "\n"
                       "if __name__ == \"__main__\":\n"
                       "    import numpy as np\n"
                       "    print(f\"result: {f(x=np.ones(4, np.float32))!r:>10}\")\n"
                       "    with open('out.txt', 'w') as fh:\n"
                       "        fh.write(f'{1 + 1}')\n"
                       "    class Demo:\n"
                       "        pass\n"
                       "    try:\n"
                       "        (y := 3)\n"
                       "    except Exception as e:\n"
                       "        raise SystemExit(1) from e\n"
                       "    text = \"\"\"\n"
                       "not indented $ ` ? inside a string\n"
                       "\"\"\"\n"
                       "    data = [1,\n"
                       "2, 3]  # a continuation line at column 0\n"
                       "    lam = lambda *a, **k: None\n"
                       "\n"
                       "    # comment at the end of the block\n"
                       "N = 3\n"),
            "(import stagegraph as sg)\n"
            "(def @(. sg function) f (x:([] (. sg f32) 4)) [(return (+ x 1))])\n"
            "(if (== __name__ \"__main__\") [] [])\n"
            "(= N 3)\n");
}

TEST(MainGuard, BlockAtTheEndOfTheFileWithoutANewline) {
  EXPECT_EQ(parse_dump("x = 1\nif __name__ == '__main__':\n\tprint(f'{x}')"),
            "(= x 1)\n(if (== __name__ \"__main__\") [] [])\n");
}

TEST(MainGuard, BodyOnTheHeaderLine) {
  EXPECT_EQ(parse_dump("if __name__ == \"__main__\": print(f\"{1}\"); import numpy\nx = 2\n"),
            "(if (== __name__ \"__main__\") [] [])\n(= x 2)\n");
}

TEST(MainGuard, ReversedComparisonAndElseClauses) {
  EXPECT_EQ(parse_dump("if \"__main__\" == __name__:  # demo\n"
                       "    print(f'{a}')\n"
                       "elif True:\n"
                       "    with x: pass\n"
                       "else:\n"
                       "    del y\n"
                       "z = 1\n"),
            "(if (== \"__main__\" __name__) [] [])\n(= z 1)\n");
}

TEST(MainGuard, OnlyAtModuleLevel) {
  // Inside a function it is an ordinary if, so its body is parsed (and checked).
  EXPECT_EQ(parse_dump("def f():\n    if __name__ == '__main__':\n        with x: pass\n"),
            "ERRORS\n3:9: 'with' statements are not supported in staged programs\n");
  // Another test at module level is parsed normally too.
  EXPECT_EQ(parse_dump("if __name__ != '__main__':\n    x = 1\n"), "(if (!= __name__ \"__main__\") [(= x 1)] [])\n");
}

TEST(MainGuard, MissingBodyIsAnError) {
  EXPECT_EQ(parse_dump("if __name__ == '__main__':\nx = 1\n"),
            "ERRORS\n2:1: expected an indented block after the 'if' statement on line 1\n");
  EXPECT_EQ(parse_dump("if __name__ == '__main__':\n"), "ERRORS\n2:1: expected an indented block after the 'if' statement on line 1\n");
}

TEST(MainGuard, ErrorsAfterTheBlockKeepTheirLines) {
  EXPECT_EQ(parse_dump("if __name__ == '__main__':\n    s = '''\n\n'''\n    t = 1\nwith E:\n    pass\n"),
            "ERRORS\n6:1: 'with' statements are not supported in staged programs\n");
}

}  // namespace
}  // namespace sg::compiler::testing
