#include "frontend/diagnostics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace sg::compiler {
namespace {

SourceSpan span(uint32_t file, uint32_t line, uint32_t col, uint32_t end_line, uint32_t end_col) {
  return SourceSpan{file, line, col, end_line, end_col};
}

class DiagnosticsTest : public ::testing::Test {
 protected:
  SourceManager sources_;
  uint32_t file_ = sources_.add("model.py", "def f(a, b):\n    x = a @ b\n\ty = (x +\r\n         1)\n");
  DiagnosticEngine diags_{sources_};

  std::string text() {
    std::ostringstream os;
    diags_.print_text(os);
    return os.str();
  }
  std::string json() {
    std::ostringstream os;
    diags_.print_json(os);
    return os.str();
  }
};

TEST_F(DiagnosticsTest, SourceLinesAreOneBasedWithoutLineEnds) {
  const SourceFile& f = sources_.file(file_);
  EXPECT_EQ(f.line(1), "def f(a, b):");
  EXPECT_EQ(f.line(3), "\ty = (x +");
  EXPECT_EQ(f.line(5), "");  // after the final newline
  EXPECT_EQ(f.line(0), "");
  EXPECT_EQ(f.line(99), "");
}

TEST_F(DiagnosticsTest, ErrorWithCaretUnderTheSpan) {
  diags_.error(span(file_, 2, 9, 2, 14), "matmul inner dims differ: 3 vs 4");
  EXPECT_EQ(text(),
            "model.py:2:9: error: matmul inner dims differ: 3 vs 4\n"
            "        x = a @ b\n"
            "            ^~~~~\n");
  EXPECT_TRUE(diags_.has_errors());
  EXPECT_EQ(diags_.error_count(), 1u);
}

TEST_F(DiagnosticsTest, AnOperationPointsAtItsOperator) {
  // `a @ b`: LINE:COL and the caret at the `@`, tildes over the operands.
  const SourceSpan matmul = operator_span(span(file_, 2, 9, 2, 14), span(file_, 2, 11, 2, 12));
  diags_.error(matmul, "matmul inner dims differ: 3 vs 4");
  EXPECT_EQ(text(),
            "model.py:2:11: error: matmul inner dims differ: 3 vs 4\n"
            "        x = a @ b\n"
            "            ~~^~~\n");
  EXPECT_EQ(json(),
            "{\"file\":\"model.py\",\"line\":2,\"column\":11,\"severity\":\"error\","
            "\"message\":\"matmul inner dims differ: 3 vs 4\",\"notes\":[]}\n");
}

TEST_F(DiagnosticsTest, AnOperationOverSeveralLinesShowsTheOperatorsLine) {
  // `x +\n 1`: the `+` on line 3, the expression going on to line 4.
  diags_.error(operator_span(span(file_, 3, 7, 4, 11), span(file_, 3, 9, 3, 10)), "add");
  EXPECT_EQ(text(),
            "model.py:3:9: error: add\n"
            "    \ty = (x +\n"
            "    \t     ~~^\n");
}

TEST_F(DiagnosticsTest, AnOperatorSpanWithoutAnOperatorIsTheExpression) {
  const SourceSpan whole = span(file_, 2, 9, 2, 14);
  const SourceSpan s = operator_span(whole, SourceSpan{});
  EXPECT_EQ(s.line, 2u);
  EXPECT_EQ(s.col, 9u);
  EXPECT_EQ(s.start_line, 0u);
}

TEST_F(DiagnosticsTest, NotesWithAndWithoutLocations) {
  diags_.error(span(file_, 2, 9, 2, 10), "bad operand",
               {Note{span(file_, 1, 7, 1, 8), "'a' declared here"}, Note{SourceSpan{}, "shapes are [3] and [4]"}});
  EXPECT_EQ(text(),
            "model.py:2:9: error: bad operand\n"
            "        x = a @ b\n"
            "            ^\n"
            "model.py:1:7: note: 'a' declared here\n"
            "    def f(a, b):\n"
            "          ^\n"
            "model.py:2:9: note: shapes are [3] and [4]\n");
}

TEST_F(DiagnosticsTest, TabsAreKeptSoTheCaretLinesUp) {
  diags_.warning(span(file_, 3, 6, 4, 11), "multi-line span");
  EXPECT_EQ(text(),
            "model.py:3:6: warning: multi-line span\n"
            "    \ty = (x +\n"
            "    \t    ^~~~\n");
  EXPECT_FALSE(diags_.has_errors());
  EXPECT_EQ(diags_.error_count(), 0u);
}

TEST_F(DiagnosticsTest, WerrorTurnsWarningsIntoErrors) {
  diags_.warning(span(file_, 2, 5, 2, 6), "broadcast of [N] and [N,1] gives [N,N]");
  diags_.set_werror(true);
  EXPECT_TRUE(diags_.has_errors());
  EXPECT_EQ(diags_.error_count(), 1u);
  EXPECT_EQ(text(),
            "model.py:2:5: error: broadcast of [N] and [N,1] gives [N,N] [-Werror]\n"
            "        x = a @ b\n"
            "        ^\n");
  EXPECT_EQ(json(),
            "{\"file\":\"model.py\",\"line\":2,\"column\":5,\"severity\":\"error\","
            "\"message\":\"broadcast of [N] and [N,1] gives [N,N]\",\"notes\":[]}\n");
}

TEST_F(DiagnosticsTest, JsonIsOneObjectPerLine) {
  diags_.error(span(file_, 2, 9, 2, 14), "say \"no\"", {Note{span(file_, 1, 7, 1, 8), "from here"}, Note{{}, "why"}});
  diags_.warning(span(file_, 1, 1, 1, 4), "w");
  EXPECT_EQ(json(),
            "{\"file\":\"model.py\",\"line\":2,\"column\":9,\"severity\":\"error\",\"message\":\"say \\\"no\\\"\","
            "\"notes\":[{\"file\":\"model.py\",\"line\":1,\"column\":7,\"message\":\"from here\"},"
            "{\"file\":\"model.py\",\"line\":2,\"column\":9,\"message\":\"why\"}]}\n"
            "{\"file\":\"model.py\",\"line\":1,\"column\":1,\"severity\":\"warning\",\"message\":\"w\",\"notes\":[]}\n");
}

TEST_F(DiagnosticsTest, ErrorsWithoutALocationAndBadUtf8DoNotBreakPrinting) {
  diags_.error(SourceSpan{}, "no entry point named 'main'");
  diags_.error(span(77, 1, 1, 1, 2), "unknown file id \xff");
  EXPECT_EQ(text(), "error: no entry point named 'main'\nerror: unknown file id \xff\n");
  std::string j = json();
  EXPECT_NE(j.find("\"file\":\"\",\"line\":0,\"column\":0,\"severity\":\"error\",\"message\":\"no entry point"), std::string::npos);
  EXPECT_EQ(std::count(j.begin(), j.end(), '\n'), 2);
}

TEST_F(DiagnosticsTest, FormatGivesOneDiagnostic) {
  Diagnostic d{Severity::kNote, span(file_, 1, 1, 1, 4), "entry point", {}};
  diags_.report(d);
  EXPECT_EQ(diags_.format(d), "model.py:1:1: note: entry point\n    def f(a, b):\n    ^~~\n");
  EXPECT_FALSE(diags_.has_errors());
}

TEST(SourceManager, FilesKeepTheirIdsAndPaths) {
  SourceManager sources;
  EXPECT_EQ(sources.add("a.py", "x\n"), 0u);
  EXPECT_EQ(sources.add("dir/b.py", "y"), 1u);
  EXPECT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources.file(1).path, "dir/b.py");
  EXPECT_EQ(sources.file(1).line(1), "y");
}

}  // namespace
}  // namespace sg::compiler
