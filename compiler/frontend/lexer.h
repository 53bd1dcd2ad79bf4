// Tokenizer for the Python subset (Python 3 lexical rules, see parser.h).
//
// Tokens are produced on demand so that the parser can skip a block without
// tokenizing it (the body of `if __name__ == "__main__":` may hold any Python).
//
// Indentation: a stack of widths; a tab advances to the next multiple of 8 (the
// rule CPython uses to measure a line), so tab-only and space-only files both work.
// Errors (unterminated strings, invalid characters, bad numbers, ':=') are
// reported to the DiagnosticEngine and end the token stream with kError.
//
// An f-string is lexed whole into the tokens of a call of the hidden builtin
// `$fstring` (a name no program can write): f"a{x!r:>4}b" becomes
// $fstring('a', (x), 'r', '>4', 'b') -- literal parts and, per replacement
// field, the expression in parentheses, its conversion and its format spec.
// The expression's tokens keep their own positions in the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostics.h"

namespace sg::compiler {

enum class TokenKind : uint8_t {
  kName,     // identifier; text
  kKeyword,  // Python keyword; text
  kOp,       // operator or delimiter; text ("(", "**=", "->", "...")
  kInt,      // int_value; text is the literal as written
  kFloat,    // float_value
  kString,   // str_value (escapes decoded); text is the literal as written
  kNewline,  // end of a logical line
  kIndent,
  kDedent,
  kEnd,      // end of file
  kError,    // a lexical error, already reported
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  std::string str_value;
  int64_t int_value = 0;
  double float_value = 0;
  SourceSpan span;

  bool is_op(std::string_view op) const { return kind == TokenKind::kOp && text == op; }
  bool is_keyword(std::string_view kw) const { return kind == TokenKind::kKeyword && text == kw; }
};

// How a token is named in messages: "')'", "end of line", "name 'x'".
std::string describe_token(const Token& tok);

class Lexer {
 public:
  Lexer(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

  // The next token. After kEnd or kError it keeps returning that token.
  Token next();

  // Skips the body of a compound statement whose ':' was the last token returned,
  // without tokenizing it: either the rest of the line (`if c: stmt`) or the
  // following lines indented deeper than the current block. Returns false when
  // there was no body at all.
  bool skip_suite();

 private:
  char peek_char(size_t ahead = 0) const;
  void advance_char();
  SourceSpan span_from(uint32_t start_line, uint32_t start_col) const;  // .. current position
  uint32_t col() const { return static_cast<uint32_t>(pos_ - line_start_ + 1); }
  Token make(TokenKind kind, size_t start, uint32_t line, uint32_t column) const;
  Token fail(SourceSpan span, std::string message);

  bool handle_line_start(Token* out);   // indentation; true when *out is a token
  Token end_of_file();
  bool skip_space_and_comments(Token* out);  // false with *out = error on a bad '\'
  Token lex_name_or_string();
  Token lex_number();
  Token lex_string(size_t start, uint32_t line, uint32_t column, bool raw);
  Token lex_fstring(uint32_t line, uint32_t column, bool raw);
  struct FStringField {
    std::vector<Token> expr;
    std::string conversion, spec;
    bool debug = false;   // {x=}
    size_t debug_end = 0;  // where the text `x=` ends
  };
  std::optional<Token> lex_fstring_field(FStringField& f, char quote, bool triple, uint32_t field_line,
                                         uint32_t field_col);
  bool lex_backslash(std::string& out, bool raw);  // false (reported) on a bad escape
  bool lex_escape(std::string& out, SourceSpan string_span);
  Token lex_operator();

  // The indentation's width (tabs to the next multiple of 8) and, in *alt_width
  // when given, its width with every tab counting 1 (CPython's TabError check).
  size_t measure_indent(size_t* content_pos, size_t* alt_width = nullptr) const;
  void skip_raw_logical_line(bool* had_content);

  const SourceFile& src_;
  uint32_t file_;
  DiagnosticEngine& diags_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  bool at_line_start_ = true;
  bool line_has_tokens_ = false;
  std::vector<uint32_t> indents_{0};
  std::vector<uint32_t> alt_indents_{0};  // the same levels, tabs counting 1
  size_t pending_dedents_ = 0;
  struct Bracket {
    char ch;
    SourceSpan span;
  };
  std::vector<Bracket> brackets_;
  bool done_ = false;
  Token final_;  // kEnd or kError once done_
  std::vector<Token> queued_;  // the rest of an f-string's tokens
  size_t next_queued_ = 0;
  bool in_fstring_ = false;
};

}  // namespace sg::compiler
