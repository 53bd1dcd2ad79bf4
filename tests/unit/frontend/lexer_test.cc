#include "frontend/lexer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace sg::compiler {
namespace {

// Tokens as "KIND:text" joined by spaces; strings show their decoded value; a
// lexical error ends the list with the message.
std::string lex(const std::string& text) {
  SourceManager sources;
  uint32_t file = sources.add("t.py", text);
  DiagnosticEngine diags(sources);
  Lexer lexer(sources, file, diags);
  std::string out;
  for (int guard = 0; guard < 1000; ++guard) {
    Token t = lexer.next();
    if (!out.empty()) out += ' ';
    switch (t.kind) {
      case TokenKind::kName: out += "NAME:" + t.text; break;
      case TokenKind::kKeyword: out += "KW:" + t.text; break;
      case TokenKind::kOp: out += t.text; break;
      case TokenKind::kInt: out += "INT:" + std::to_string(t.int_value); break;
      case TokenKind::kFloat: {
        std::ostringstream os;
        os << t.float_value;
        out += "FLOAT:" + os.str();
        break;
      }
      case TokenKind::kString: out += "STR:<" + t.str_value + ">"; break;
      case TokenKind::kNewline: out += "NL"; break;
      case TokenKind::kIndent: out += "INDENT"; break;
      case TokenKind::kDedent: out += "DEDENT"; break;
      case TokenKind::kEnd: return out + "END";
      case TokenKind::kError: {
        const Diagnostic& d = diags.diagnostics().at(0);
        return out + "ERROR " + std::to_string(d.span.line) + ":" + std::to_string(d.span.col) + ": " + d.message;
      }
    }
  }
  return out + " (no end)";
}

std::vector<Token> tokens(const std::string& text) {
  SourceManager sources;
  uint32_t file = sources.add("t.py", text);
  DiagnosticEngine diags(sources);
  Lexer lexer(sources, file, diags);
  std::vector<Token> out;
  do {
    out.push_back(lexer.next());
  } while (out.back().kind != TokenKind::kEnd && out.back().kind != TokenKind::kError);
  return out;
}

TEST(Lexer, IndentAndDedentWithAStack) {
  EXPECT_EQ(lex("if a:\n    if b:\n        x\ny\n"),
            "KW:if NAME:a : NL INDENT KW:if NAME:b : NL INDENT NAME:x NL DEDENT DEDENT NAME:y NL END");
  EXPECT_EQ(lex("def f():\n  return 1\n"), "KW:def NAME:f ( ) : NL INDENT KW:return INT:1 NL DEDENT END");
}

TEST(Lexer, BlankAndCommentLinesDoNotAffectIndentation) {
  EXPECT_EQ(lex("if a:\n\n  # note\n      # deeper comment\n  x  # trailing\n\n"),
            "KW:if NAME:a : NL INDENT NAME:x NL DEDENT END");
}

TEST(Lexer, FileWithoutFinalNewlineStillEndsTheLine) {
  EXPECT_EQ(lex("if a:\n  x"), "KW:if NAME:a : NL INDENT NAME:x NL DEDENT END");
  EXPECT_EQ(lex(""), "END");
  EXPECT_EQ(lex("\n\n# only a comment"), "END");
}

TEST(Lexer, TabsAdvanceToTheNextMultipleOfEight) {
  // Tabs used consistently nest like spaces; "  \t" on every line is one level.
  EXPECT_EQ(lex("if a:\n\tx\n\tif b:\n\t\ty\n\tz\n"),
            "KW:if NAME:a : NL INDENT NAME:x NL KW:if NAME:b : NL INDENT NAME:y NL DEDENT NAME:z NL DEDENT END");
  EXPECT_EQ(lex("if a:\n  \tx\n  \ty\n"), "KW:if NAME:a : NL INDENT NAME:x NL NAME:y NL DEDENT END");
  EXPECT_EQ(lex("if a:\n\tif b:\n\t        y\n\tz\n"),
            "KW:if NAME:a : NL INDENT KW:if NAME:b : NL INDENT NAME:y NL DEDENT NAME:z NL DEDENT END");
}

// Where the meaning of a line's indentation depends on the tab size, CPython
// raises TabError; so does the lexer, so that a file never stages that eager mode
// refuses. Each case here is a TabError in python3.
TEST(Lexer, TabsAndSpacesThatDependOnTheTabSizeAreATabError) {
  const std::string error = "ERROR 3:1: inconsistent use of tabs and spaces in indentation (TabError)";
  EXPECT_EQ(lex("if a:\n\tx\n        y\n"), "KW:if NAME:a : NL INDENT NAME:x NL " + error);
  EXPECT_EQ(lex("if a:\n        x\n  \ty\n"), "KW:if NAME:a : NL INDENT NAME:x NL " + error);
  EXPECT_EQ(lex("if a:\n    x\n\ty\n"), "KW:if NAME:a : NL INDENT NAME:x NL " + error);
  // On a dedent: back to level 0 in width, but not in the tab-as-1 count.
  EXPECT_EQ(lex("if a:\n\tif b:\n\t\tx\n        y\n").substr(0, 60),
            std::string("KW:if NAME:a : NL INDENT KW:if NAME:b : NL INDENT NAME:x NL ").substr(0, 60));
  EXPECT_NE(lex("if a:\n\tif b:\n\t\tx\n        y\n").find("TabError"), std::string::npos);
}

// A UTF-8 byte-order mark is skipped, as Python does; columns count after it.
TEST(Lexer, ByteOrderMarkIsSkipped) {
  EXPECT_EQ(lex("\xEF\xBB\xBFx = 1\n"), "NAME:x = INT:1 NL END");
  EXPECT_EQ(lex("\xEF\xBB\xBF  x\n").substr(0, 14), "INDENT NAME:x ");
  EXPECT_EQ(lex("\xEF\xBB\xBF$\n").substr(0, 9), "ERROR 1:1");
}

TEST(Lexer, UnindentToAnUnknownLevelIsAnError) {
  EXPECT_EQ(lex("if a:\n    x\n  y\n"),
            "KW:if NAME:a : NL INDENT NAME:x NL ERROR 3:1: unindent does not match any outer indentation level");
}

TEST(Lexer, BracketsJoinLinesAndIgnoreIndentation) {
  EXPECT_EQ(lex("x = f(a,\n  b,\n      c)\ny\n"), "NAME:x = NAME:f ( NAME:a , NAME:b , NAME:c ) NL NAME:y NL END");
  EXPECT_EQ(lex("x = [\n# comment\n\n1]\n"), "NAME:x = [ INT:1 ] NL END");
}

TEST(Lexer, BackslashContinuation) {
  EXPECT_EQ(lex("x = 1 + \\\n      2\ny\n"), "NAME:x = INT:1 + INT:2 NL NAME:y NL END");
  EXPECT_EQ(lex("x = 1 \\ 2\n"), "NAME:x = INT:1 ERROR 1:7: unexpected character after line continuation character");
}

TEST(Lexer, CarriageReturnLineEndings) {
  EXPECT_EQ(lex("if a:\r\n  x\r\n"), "KW:if NAME:a : NL INDENT NAME:x NL DEDENT END");
}

TEST(Lexer, IntegerLiterals) {
  EXPECT_EQ(lex("0 7 1_000 0x1F 0XfF 0o17 0b1010 0b_1 0x_ff 00"),
            "INT:0 INT:7 INT:1000 INT:31 INT:255 INT:15 INT:10 INT:1 INT:255 INT:0 NL END");
  EXPECT_EQ(lex("9223372036854775807"), "INT:9223372036854775807 NL END");
}

TEST(Lexer, IntegerLiteralErrors) {
  EXPECT_EQ(lex("9223372036854775808"), "ERROR 1:1: integer literal is too large (it does not fit in int64)");
  EXPECT_EQ(lex("0x8000000000000000"), "ERROR 1:1: integer literal is too large (it does not fit in int64)");
  EXPECT_EQ(lex("x = 012"), "NAME:x = ERROR 1:5: leading zeros in decimal integer literals are not permitted; use 0o for octal");
  EXPECT_EQ(lex("1__0"), "ERROR 1:1: invalid decimal literal");
  EXPECT_EQ(lex("1_"), "ERROR 1:1: invalid decimal literal");
  EXPECT_EQ(lex("0b102"), "ERROR 1:1: invalid binary literal");
  EXPECT_EQ(lex("0x"), "ERROR 1:1: invalid hexadecimal literal");
  EXPECT_EQ(lex("12abc"), "ERROR 1:1: invalid decimal literal");
  EXPECT_EQ(lex("3j"), "ERROR 1:1: complex literals are not supported in staged programs");
}

TEST(Lexer, FloatLiterals) {
  EXPECT_EQ(lex("1. .5 1e-3 1_000.0 2.5E+2 1e3 0.0"),
            "FLOAT:1 FLOAT:0.5 FLOAT:0.001 FLOAT:1000 FLOAT:250 FLOAT:1000 FLOAT:0 NL END");
  std::vector<Token> t = tokens("1e400");
  EXPECT_EQ(t[0].kind, TokenKind::kFloat);
  EXPECT_TRUE(std::isinf(t[0].float_value));
}

TEST(Lexer, AttributeOfAnIntegerIsNotAFloat) {
  EXPECT_EQ(lex("x.shape[0].y"), "NAME:x . NAME:shape [ INT:0 ] . NAME:y NL END");
  EXPECT_EQ(lex("x[...]"), "NAME:x [ ... ] NL END");
}

TEST(Lexer, StringLiteralsAndEscapes) {
  EXPECT_EQ(lex(R"('a\tb' "c\"d" 'e\'f' "g\\h" "\x41\n")"), "STR:<a\tb> STR:<c\"d> STR:<e'f> STR:<g\\h> STR:<A\n> NL END");
  EXPECT_EQ(lex(R"(r'\n\'' R"a\b")"), "STR:<\\n\\'> STR:<a\\b> NL END");
  EXPECT_EQ(lex(R"('\u00e9' '\q' '\101')"), "STR:<\xc3\xa9> STR:<\\q> STR:<A> NL END");
  EXPECT_EQ(lex("'''a\n'b'\"\"c''' \"\"\"\"\"\""), "STR:<a\n'b'\"\"c> STR:<> NL END");
  EXPECT_EQ(lex("'ab\\\ncd'"), "STR:<abcd> NL END");
}

TEST(Lexer, StringErrors) {
  EXPECT_EQ(lex("x = 'abc\ny\n"), "NAME:x = ERROR 1:5: unterminated string");
  EXPECT_EQ(lex("x = \"\"\"abc\n\n"), "NAME:x = ERROR 1:5: unterminated triple-quoted string");
  EXPECT_EQ(lex("b'xy'"), "ERROR 1:1: bytes literals are not supported in staged programs");
  EXPECT_EQ(lex(R"('\x4')"), "ERROR 1:2: truncated \\xXX escape in string literal");
}

TEST(Lexer, FStringsBecomeACallOfTheHiddenFormatter) {
  // Text, then per field: (expression), conversion, spec; then text.
  EXPECT_EQ(lex("f'a{x}b'"), "NAME:$fstring ( STR:<a> , ( NAME:x ) , STR:<> , STR:<> , STR:<b> ) NL END");
  EXPECT_EQ(lex("f\"{x + 1!r:>4}{{}}\""),
            "NAME:$fstring ( STR:<> , ( NAME:x + INT:1 ) , STR:<r> , STR:<>4> , STR:<{}> ) NL END");
  EXPECT_EQ(lex("f'{d[\"k\"]} {n = }'"),
            "NAME:$fstring ( STR:<> , ( NAME:d [ STR:<k> ] ) , STR:<> , STR:<> , STR:< n = > , ( NAME:n ) , STR:<r> , "
            "STR:<> , STR:<> ) NL END");
  EXPECT_EQ(lex("rf'\\n{x}'"), "NAME:$fstring ( STR:<\\n> , ( NAME:x ) , STR:<> , STR:<> , STR:<> ) NL END");
}

TEST(Lexer, FStringErrors) {
  EXPECT_EQ(lex("f'a}b'"), "ERROR 1:4: f-string: single '}' is not allowed");
  EXPECT_EQ(lex("f'{}'"), "ERROR 1:3: f-string: empty expression not allowed");
  EXPECT_EQ(lex("f'{x!z}'"), "ERROR 1:3: f-string: invalid conversion character 'z': expected 's', 'r', or 'a'");
  EXPECT_EQ(lex("f'{x'"), "ERROR 1:3: f-string: expecting '}'");
  EXPECT_EQ(lex("f'{x:{w}}'"), "ERROR 1:3: f-string: a replacement field inside a format spec is not supported");
  EXPECT_EQ(lex("f'{f\"{x}\"}'"), "ERROR 1:4: f-strings nested inside an f-string are not supported");
  EXPECT_EQ(lex("f'abc"), "ERROR 1:1: unterminated f-string");
}

TEST(Lexer, OperatorsTakeTheLongestMatch) {
  EXPECT_EQ(lex("a**=b//=c>>=d<<=e->f**g//h@i"),
            "NAME:a **= NAME:b //= NAME:c >>= NAME:d <<= NAME:e -> NAME:f ** NAME:g // NAME:h @ NAME:i NL END");
  EXPECT_EQ(lex("+= -= *= /= %= @= &= |= ^= == != <= >= < > ~ ; ."),
            "+= -= *= /= %= @= &= |= ^= == != <= >= < > ~ ; . NL END");
}

TEST(Lexer, KeywordsAndNames) {
  EXPECT_EQ(lex("if not_ None is_ True lambda match"),
            "KW:if NAME:not_ KW:None NAME:is_ KW:True KW:lambda NAME:match NL END");
}

TEST(Lexer, InvalidInput) {
  EXPECT_EQ(lex("x = $y"), "NAME:x = ERROR 1:5: invalid character '$'");
  EXPECT_EQ(lex("a ! b"), "NAME:a ERROR 1:3: invalid character '!'");
  EXPECT_EQ(lex("(y := 3)"), "( NAME:y ERROR 1:4: assignment expressions (':=') are not supported in staged programs");
  EXPECT_EQ(lex("f(x]"), "NAME:f ( NAME:x ERROR 1:4: closing ']' does not match opening '('");
  EXPECT_EQ(lex("x)"), "NAME:x ERROR 1:2: unmatched ')'");
  EXPECT_EQ(lex("f(x,\n  y\n"), "NAME:f ( NAME:x , NAME:y ERROR 1:2: '(' was never closed");
}

TEST(Lexer, SpansAreOneBasedWithExclusiveEnd) {
  std::vector<Token> t = tokens("x = foo(1)\n  \nreturn 'ab\ncd' if y\n");
  // x
  EXPECT_EQ(t[0].span.line, 1u);
  EXPECT_EQ(t[0].span.col, 1u);
  EXPECT_EQ(t[0].span.end_col, 2u);
  // foo
  EXPECT_EQ(t[2].text, "foo");
  EXPECT_EQ(t[2].span.col, 5u);
  EXPECT_EQ(t[2].span.end_col, 8u);
  // NEWLINE at the end of line 1
  EXPECT_EQ(t[6].kind, TokenKind::kNewline);
  EXPECT_EQ(t[6].span.line, 1u);
  EXPECT_EQ(t[6].span.col, 11u);
  // return, on line 3 after a blank line
  EXPECT_EQ(t[7].text, "return");
  EXPECT_EQ(t[7].span.line, 3u);
  EXPECT_EQ(t[7].span.col, 1u);
}

TEST(Lexer, TripleQuotedStringSpansLines) {
  std::vector<Token> t = tokens("s = '''a\nbc''' + x\n");
  ASSERT_EQ(t[2].kind, TokenKind::kString);
  EXPECT_EQ(t[2].span.line, 1u);
  EXPECT_EQ(t[2].span.col, 5u);
  EXPECT_EQ(t[2].span.end_line, 2u);
  EXPECT_EQ(t[2].span.end_col, 6u);
  EXPECT_EQ(t[4].text, "x");
  EXPECT_EQ(t[4].span.line, 2u);
  EXPECT_EQ(t[4].span.col, 9u);
}

TEST(Lexer, SkipSuiteStepsOverABlockWithoutTokenizingIt) {
  SourceManager sources;
  uint32_t file = sources.add("t.py", "if c:\n    print(f\"{x}\")\n    s = '''\nnot code $\n'''\n\n# c\ny\n");
  DiagnosticEngine diags(sources);
  Lexer lexer(sources, file, diags);
  EXPECT_TRUE(lexer.next().is_keyword("if"));
  EXPECT_EQ(lexer.next().text, "c");
  EXPECT_TRUE(lexer.next().is_op(":"));
  EXPECT_TRUE(lexer.skip_suite());
  Token y = lexer.next();
  EXPECT_EQ(y.text, "y");
  EXPECT_EQ(y.span.line, 8u);
  EXPECT_EQ(lexer.next().kind, TokenKind::kNewline);
  EXPECT_EQ(lexer.next().kind, TokenKind::kEnd);
  EXPECT_FALSE(diags.has_errors());
}

}  // namespace
}  // namespace sg::compiler
