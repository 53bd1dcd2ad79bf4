#include "lexer.h"

#include <array>

#include "lexer_chars.h"

namespace sg::compiler {
namespace {

using namespace lexer_chars;

constexpr std::array<std::string_view, 35> kKeywords = {
    "False", "None",   "True",     "and",   "as",     "assert", "async",  "await",    "break",
    "class", "continue", "def",    "del",   "elif",   "else",   "except", "finally",  "for",
    "from",  "global", "if",       "import", "in",    "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise",    "return", "try",   "while",  "with",   "yield"};

// Longest match first.
constexpr std::array<std::string_view, 5> kOps3 = {"**=", "//=", ">>=", "<<=", "..."};
constexpr std::array<std::string_view, 19> kOps2 = {"**", "//", "<<", ">>", "<=", ">=", "==",
                                                    "!=", "->", ":=", "+=", "-=", "*=", "/=",
                                                    "%=", "@=", "&=", "|=", "^="};
constexpr std::string_view kOps1 = "+-*/%@&|^~<>()[]{},:.;=";

// Limits as in CPython; they keep the recursive-descent parser's stack bounded.
constexpr size_t kMaxIndentLevels = 100;
constexpr size_t kMaxBracketDepth = 200;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c | 0x20);
  return out;
}

}  // namespace

std::string describe_token(const Token& tok) {
  switch (tok.kind) {
    case TokenKind::kName: return "name '" + tok.text + "'";
    case TokenKind::kKeyword:
    case TokenKind::kOp:
    case TokenKind::kInt:
    case TokenKind::kFloat: return "'" + tok.text + "'";
    case TokenKind::kString: return "string literal";
    case TokenKind::kNewline: return "end of line";
    case TokenKind::kIndent: return "indent";
    case TokenKind::kDedent: return "dedent";
    case TokenKind::kEnd: return "end of file";
    case TokenKind::kError: return "invalid token";
  }
  return "token";
}

Lexer::Lexer(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags)
    : src_(sources.file(file)), file_(file), diags_(diags) {
  // A UTF-8 byte-order mark is skipped, as Python does; columns count from after it.
  if (src_.text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = line_start_ = 3;
}

char Lexer::peek_char(size_t ahead) const {
  size_t p = pos_ + ahead;
  return p < src_.text.size() ? src_.text[p] : '\0';
}

void Lexer::advance_char() {
  if (pos_ >= src_.text.size()) return;
  if (src_.text[pos_] == '\n') {
    ++line_;
    line_start_ = pos_ + 1;
  }
  ++pos_;
}

SourceSpan Lexer::span_from(uint32_t start_line, uint32_t start_col) const {
  return SourceSpan{file_, start_line, start_col, line_, col()};
}

Token Lexer::make(TokenKind kind, size_t start, uint32_t line, uint32_t column) const {
  Token t;
  t.kind = kind;
  t.text = src_.text.substr(start, pos_ - start);
  t.span = span_from(line, column);
  return t;
}

Token Lexer::fail(SourceSpan span, std::string message) {
  diags_.error(span, std::move(message));
  done_ = true;
  final_ = Token{};
  final_.kind = TokenKind::kError;
  final_.span = span;
  return final_;
}

Token Lexer::next() {
  if (done_) return final_;
  if (next_queued_ < queued_.size()) return queued_[next_queued_++];
  if (pending_dedents_ > 0) {
    --pending_dedents_;
    return make(TokenKind::kDedent, pos_, line_, col());
  }
  for (;;) {
    if (at_line_start_ && brackets_.empty()) {
      Token t;
      if (handle_line_start(&t)) return t;
    }
    Token err;
    if (!skip_space_and_comments(&err)) return err;
    if (pos_ >= src_.text.size()) return end_of_file();
    char c = peek_char();
    if (c == '\n') {
      uint32_t line = line_, column = col();
      size_t start = pos_;
      advance_char();
      if (!brackets_.empty() || !line_has_tokens_) continue;  // implicit line joining
      at_line_start_ = true;
      line_has_tokens_ = false;
      Token t = make(TokenKind::kNewline, start, line, column);
      t.span.end_line = line;
      t.span.end_col = column + 1;
      return t;
    }
    line_has_tokens_ = true;
    if (is_name_start(c)) return lex_name_or_string();
    if (is_dec(c) || (c == '.' && is_dec(peek_char(1)))) return lex_number();
    if (c == '"' || c == '\'') return lex_string(pos_, line_, col(), /*raw=*/false);
    return lex_operator();
  }
}

size_t Lexer::measure_indent(size_t* content_pos, size_t* alt_width) const {
  size_t width = 0, alt = 0, p = pos_;
  const std::string& s = src_.text;
  for (; p < s.size(); ++p) {
    if (s[p] == ' ') {
      ++width;
      ++alt;
    } else if (s[p] == '\t') {
      width = (width / 8 + 1) * 8;
      ++alt;
    } else if (s[p] == '\f') {
      width = alt = 0;
    } else if (s[p] != '\r') {
      break;
    }
  }
  *content_pos = p;
  if (alt_width) *alt_width = alt;
  return width;
}

bool Lexer::handle_line_start(Token* out) {
  at_line_start_ = false;
  for (;;) {
    size_t content, alt = 0;
    size_t width = measure_indent(&content, &alt);
    pos_ = content;
    if (content >= src_.text.size()) return false;
    char c = src_.text[content];
    if (c == '#' || c == '\n') {  // blank or comment-only line: no NEWLINE, no indentation
      while (pos_ < src_.text.size() && src_.text[pos_] != '\n') advance_char();
      advance_char();
      continue;
    }
    // As CPython: the indentation is measured twice, a tab advancing to the next
    // multiple of 8 and a tab counting as 1; when the two measures order this line
    // differently against the enclosing block, its meaning depends on the tab size.
    const auto inconsistent = [&] {
      *out = fail(SourceSpan{file_, line_, 1, line_, col()},
                  "inconsistent use of tabs and spaces in indentation (TabError)");
      return true;
    };
    if (width == indents_.back() && alt != alt_indents_.back()) return inconsistent();
    if (width > indents_.back()) {
      if (alt <= alt_indents_.back()) return inconsistent();
      if (indents_.size() > kMaxIndentLevels) {
        *out = fail(SourceSpan{file_, line_, 1, line_, col()}, "too many levels of indentation");
        return true;
      }
      indents_.push_back(static_cast<uint32_t>(width));
      alt_indents_.push_back(static_cast<uint32_t>(alt));
      *out = make(TokenKind::kIndent, line_start_, line_, 1);
      return true;
    }
    if (width < indents_.back()) {
      size_t count = 0;
      while (indents_.back() > width) {
        indents_.pop_back();
        alt_indents_.pop_back();
        ++count;
      }
      if (indents_.back() != width) {
        *out = fail(SourceSpan{file_, line_, 1, line_, col()},
                    "unindent does not match any outer indentation level");
        return true;
      }
      if (alt != alt_indents_.back()) return inconsistent();
      pending_dedents_ = count - 1;
      *out = make(TokenKind::kDedent, pos_, line_, col());
      return true;
    }
    return false;
  }
}

Token Lexer::end_of_file() {
  if (!brackets_.empty()) {
    const Bracket& b = brackets_.back();
    return fail(b.span, std::string("'") + b.ch + "' was never closed");
  }
  if (line_has_tokens_) {  // a last line without '\n'
    line_has_tokens_ = false;
    return make(TokenKind::kNewline, pos_, line_, col());
  }
  if (indents_.size() > 1) {
    indents_.pop_back();
    alt_indents_.pop_back();
    return make(TokenKind::kDedent, pos_, line_, col());
  }
  done_ = true;
  final_ = make(TokenKind::kEnd, pos_, line_, col());
  return final_;
}

bool Lexer::skip_space_and_comments(Token* out) {
  for (;;) {
    char c = peek_char();
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      advance_char();
    } else if (c == '#') {
      while (pos_ < src_.text.size() && peek_char() != '\n') advance_char();
    } else if (c == '\\') {
      uint32_t line = line_, column = col();
      advance_char();
      if (peek_char() == '\r') advance_char();
      if (pos_ >= src_.text.size()) {
        *out = fail(span_from(line, column), "unexpected end of file after line continuation");
        return false;
      }
      if (peek_char() != '\n') {
        *out = fail(span_from(line, column),
                    "unexpected character after line continuation character");
        return false;
      }
      advance_char();  // the joined line's indentation is not significant
    } else {
      return true;
    }
  }
}

Token Lexer::lex_name_or_string() {
  size_t start = pos_;
  uint32_t line = line_, column = col();
  while (is_name_char(peek_char())) advance_char();
  std::string_view word(src_.text.data() + start, pos_ - start);
  char c = peek_char();
  if ((c == '"' || c == '\'') && word.size() <= 2) {
    std::string prefix = lower(word);
    if (prefix == "r" || prefix == "u" || prefix == "b" || prefix == "f" || prefix == "br" ||
        prefix == "rb" || prefix == "fr" || prefix == "rf") {
      if (prefix.find('f') != std::string::npos) return lex_fstring(line, column, prefix.find('r') != std::string::npos);
      if (prefix.find('b') != std::string::npos) {
        return fail(span_from(line, column), "bytes literals are not supported in staged programs");
      }
      return lex_string(start, line, column, prefix == "r");
    }
  }
  Token t = make(TokenKind::kName, start, line, column);
  for (std::string_view kw : kKeywords) {
    if (kw == word) t.kind = TokenKind::kKeyword;
  }
  return t;
}

Token Lexer::lex_operator() {
  size_t start = pos_;
  uint32_t line = line_, column = col();
  std::string_view rest(src_.text.data() + pos_, src_.text.size() - pos_);
  size_t len = 0;
  for (std::string_view op : kOps3) {
    if (rest.starts_with(op)) len = 3;
  }
  for (std::string_view op : kOps2) {
    if (len == 0 && rest.starts_with(op)) len = 2;
  }
  if (len == 0 && kOps1.find(rest[0]) != std::string_view::npos) len = 1;
  if (len == 0) {
    advance_char();
    unsigned char ch = static_cast<unsigned char>(rest[0]);
    std::string shown = ch >= 0x20 && ch < 0x7F ? std::string(1, rest[0]) : "\\x" + std::string{"0123456789abcdef"[ch >> 4], "0123456789abcdef"[ch & 15]};
    return fail(span_from(line, column), "invalid character '" + shown + "'");
  }
  for (size_t i = 0; i < len; ++i) advance_char();
  Token t = make(TokenKind::kOp, start, line, column);
  if (t.text == ":=") {
    return fail(t.span, "assignment expressions (':=') are not supported in staged programs");
  }
  char c = t.text[0];
  if (len == 1 && (c == '(' || c == '[' || c == '{')) {
    if (brackets_.size() >= kMaxBracketDepth) return fail(t.span, "too many nested brackets");
    brackets_.push_back(Bracket{c, t.span});
  } else if (len == 1 && (c == ')' || c == ']' || c == '}')) {
    if (brackets_.empty()) return fail(t.span, std::string("unmatched '") + c + "'");
    char open = brackets_.back().ch;
    char want = open == '(' ? ')' : open == '[' ? ']' : '}';
    if (c != want) {
      return fail(t.span, std::string("closing '") + c + "' does not match opening '" + open + "'");
    }
    brackets_.pop_back();
  }
  return t;
}

bool Lexer::skip_suite() {
  if (done_) return true;
  bool content = false;
  skip_raw_logical_line(&content);
  at_line_start_ = true;
  line_has_tokens_ = false;
  if (content) return true;
  bool skipped = false;
  for (;;) {
    size_t content_pos;
    size_t width = measure_indent(&content_pos);
    if (content_pos >= src_.text.size()) {
      pos_ = content_pos;
      break;
    }
    char c = src_.text[content_pos];
    bool blank = c == '\n' || c == '#';
    if (!blank && width <= indents_.back()) break;  // the block ended; tokenize this line
    pos_ = content_pos;
    bool unused = false;
    skip_raw_logical_line(&unused);
    skipped = skipped || !blank;
  }
  return skipped;
}

// Steps over one logical line without tokenizing it, keeping track of strings and
// brackets so that a multi-line string or call does not end it early.
void Lexer::skip_raw_logical_line(bool* had_content) {
  int depth = 0;
  const std::string& s = src_.text;
  while (pos_ < s.size()) {
    char c = s[pos_];
    if (c == '\n') {
      advance_char();
      if (depth == 0) return;
    } else if (c == '#') {
      while (pos_ < s.size() && s[pos_] != '\n') advance_char();
    } else if (c == '\\') {
      advance_char();
      advance_char();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      advance_char();
    } else if (c == '"' || c == '\'') {
      *had_content = true;
      bool triple = peek_char(1) == c && peek_char(2) == c;
      for (int i = 0; i < (triple ? 3 : 1); ++i) advance_char();
      while (pos_ < s.size()) {
        if (s[pos_] == '\\') {
          advance_char();
          advance_char();
        } else if (s[pos_] == c && (!triple || (peek_char(1) == c && peek_char(2) == c))) {
          for (int i = 0; i < (triple ? 3 : 1); ++i) advance_char();
          break;
        } else if (s[pos_] == '\n' && !triple) {
          break;  // unterminated: Python would reject it when running the block
        } else {
          advance_char();
        }
      }
    } else {
      *had_content = true;
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      advance_char();
    }
  }
}

}  // namespace sg::compiler
