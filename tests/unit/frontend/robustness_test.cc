// Bad input gives errors, never a crash: deep nesting is bounded, and every
// one-character mutation of a real program either parses or reports an error.
#include <gtest/gtest.h>

#include <random>

#include "frontend/frontend_test_util.h"

namespace sg::compiler::testing {
namespace {

const char* const kProgram =
    "\"\"\"Doc.\"\"\"\n"
    "import stagegraph as sg\n"
    "from stagegraph import f32\n"
    "H = 32\n"
    "\n"
    "@sg.function\n"
    "def rnn(xs: sg.f32[\"T\", 16], h0: sg.f32[H], W: sg.f32[16, H]) -> sg.f32[H]:\n"
    "    h = h0  # state\n"
    "    for t in range(xs.shape[0]):\n"
    "        h = sg.tanh(xs[t] @ W + h * 0.5e-1)\n"
    "        if t >= 3 and not h[0] > 1: break\n"
    "    ys = [h[i:i + 2, ...] for i in range(0, H, 2) if i % 4 == 0]\n"
    "    return {'h': h, 'n': (len(ys), -1)}\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    print(f'{rnn}')\n";

TEST(Robustness, TheSampleProgramParses) {
  ParseResult r = parse_source(kProgram);
  EXPECT_TRUE(r.module) << r.errors;
}

TEST(Robustness, DeepNestingIsAnError) {
  std::string parens = "x = " + std::string(300, '(') + "1" + std::string(300, ')') + "\n";
  EXPECT_EQ(parse_dump(parens), "ERRORS\n1:205: too many nested brackets\n");
  std::string unary = "x = " + std::string(5000, '-') + "1\n";
  EXPECT_EQ(parse_dump(unary), "ERRORS\n1:305: expression is nested too deeply\n");
  std::string nots = "x = " ;
  for (int i = 0; i < 3000; ++i) nots += "not ";
  EXPECT_EQ(parse_dump(nots + "y\n"), "ERRORS\n1:1205: expression is nested too deeply\n");
  std::string blocks;
  for (int i = 0; i < 120; ++i) blocks += std::string(i, ' ') + "if x:\n";
  blocks += std::string(120, ' ') + "pass\n";
  EXPECT_EQ(parse_dump(blocks), "ERRORS\n102:1: too many levels of indentation\n");
}

TEST(Robustness, EveryMutationParsesOrReportsAnError) {
  const std::string base = kProgram;
  const std::string alphabet = "()[]{}:,.'\"\\\n\t #@=*-+<>!$xif0_";
  std::mt19937 rng(1234);
  int failures = 0;
  for (size_t pos = 0; pos < base.size(); ++pos) {
    for (int variant = 0; variant < 3; ++variant) {
      std::string text = base;
      char c = alphabet[rng() % alphabet.size()];
      if (variant == 0) text.erase(pos, 1);
      if (variant == 1) text.insert(pos, 1, c);
      if (variant == 2) text[pos] = c;
      ParseResult r = parse_source(text);
      bool consistent = (r.module != nullptr) == r.errors.empty();
      if (!consistent && ++failures < 5) ADD_FAILURE() << "inconsistent result for:\n" << text << "\n" << r.errors;
    }
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace sg::compiler::testing
