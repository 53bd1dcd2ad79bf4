// Number and string literals (Python 3 rules; see lexer.h).
#include <charconv>
#include <cstdlib>
#include <limits>

#include "lexer.h"
#include "lexer_chars.h"

namespace sg::compiler {
namespace {

using namespace lexer_chars;

int hex_value(char c) {
  if (is_dec(c)) return c - '0';
  return (c | 0x20) - 'a' + 10;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

Token Lexer::lex_number() {
  size_t start = pos_;
  uint32_t line = line_, column = col();
  auto scan = [&](bool (*digit)(char)) {
    size_t n = 0;
    for (;;) {
      if (digit(peek_char())) {
        advance_char();
        ++n;
      } else if (peek_char() == '_' && digit(peek_char(1))) {
        advance_char();  // one '_' between digits (or right after a base prefix)
      } else {
        return n;
      }
    }
  };
  auto invalid = [&](const char* kind) {
    while (is_name_char(peek_char())) advance_char();
    return fail(span_from(line, column), std::string("invalid ") + kind + " literal");
  };
  auto too_large = [&] {
    return fail(span_from(line, column), "integer literal is too large (it does not fit in int64)");
  };

  char c1 = static_cast<char>(peek_char(1) | 0x20);
  if (peek_char() == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
    advance_char();
    advance_char();
    bool (*digit)(char) = c1 == 'x' ? is_hex : c1 == 'o' ? is_oct : is_bin;
    const char* kind = c1 == 'x' ? "hexadecimal" : c1 == 'o' ? "octal" : "binary";
    int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
    if (peek_char() == '_' && digit(peek_char(1))) advance_char();
    if (scan(digit) == 0 || is_name_char(peek_char())) return invalid(kind);
    uint64_t value = 0;
    for (size_t p = start + 2; p < pos_; ++p) {
      if (src_.text[p] == '_') continue;
      int d = hex_value(src_.text[p]);
      if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / base) return too_large();
      value = value * base + d;
    }
    Token t = make(TokenKind::kInt, start, line, column);
    t.int_value = static_cast<int64_t>(value);
    return t;
  }

  bool is_float = false;
  size_t int_digits = scan(is_dec);
  if (peek_char() == '.') {
    advance_char();
    is_float = true;
    scan(is_dec);
  }
  char e = peek_char();
  if ((e == 'e' || e == 'E') &&
      (is_dec(peek_char(1)) || ((peek_char(1) == '+' || peek_char(1) == '-') && is_dec(peek_char(2))))) {
    advance_char();
    if (peek_char() == '+' || peek_char() == '-') advance_char();
    scan(is_dec);
    is_float = true;
  }
  if (peek_char() == 'j' || peek_char() == 'J') {
    advance_char();
    return fail(span_from(line, column), "complex literals are not supported in staged programs");
  }
  if (is_name_char(peek_char())) return invalid("decimal");

  std::string digits;
  for (size_t p = start; p < pos_; ++p) {
    if (src_.text[p] != '_') digits += src_.text[p];
  }
  Token t = make(TokenKind::kFloat, start, line, column);
  if (is_float) {
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.float_value);
    if (ec == std::errc::result_out_of_range) t.float_value = std::strtod(digits.c_str(), nullptr);
    (void)ptr;
    return t;
  }
  t.kind = TokenKind::kInt;
  if (int_digits > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos) {
    return fail(t.span, "leading zeros in decimal integer literals are not permitted; use 0o for octal");
  }
  uint64_t value = 0;
  for (char d : digits) {
    if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - (d - '0')) / 10) return too_large();
    value = value * 10 + (d - '0');
  }
  t.int_value = static_cast<int64_t>(value);
  return t;
}

Token Lexer::lex_string(size_t start, uint32_t line, uint32_t column, bool raw) {
  const char quote = peek_char();
  const bool triple = peek_char(1) == quote && peek_char(2) == quote;
  for (int i = 0; i < (triple ? 3 : 1); ++i) advance_char();
  std::string value;
  for (;;) {
    if (pos_ >= src_.text.size()) {
      return fail(span_from(line, column),
                  triple ? "unterminated triple-quoted string" : "unterminated string");
    }
    char c = peek_char();
    if (c == quote) {
      if (!triple) {
        advance_char();
        break;
      }
      if (peek_char(1) == quote && peek_char(2) == quote) {
        for (int i = 0; i < 3; ++i) advance_char();
        break;
      }
    }
    if (c == '\n' && !triple) {
      return fail(span_from(line, column), "unterminated string");
    }
    if (c == '\r' && peek_char(1) == '\n') {
      advance_char();
      continue;
    }
    if (c == '\\') {
      if (!lex_backslash(value, raw)) return final_;
      continue;
    }
    value += c;
    advance_char();
  }
  Token t = make(TokenKind::kString, start, line, column);
  t.str_value = std::move(value);
  return t;
}

bool Lexer::lex_backslash(std::string& out, bool raw) {
  if (!raw) return lex_escape(out, SourceSpan{file_, line_, col(), line_, col() + 2});
  // In a raw string the backslash stays, and still keeps the next char from ending the string.
  out += peek_char();
  advance_char();
  if (pos_ < src_.text.size()) out += peek_char();
  advance_char();
  return true;
}

bool Lexer::lex_escape(std::string& out, SourceSpan span) {
  advance_char();  // the backslash
  char c = peek_char();
  if (pos_ >= src_.text.size()) return true;  // the caller reports the unterminated string
  auto read_hex = [&](int count, const char* what) -> bool {
    uint32_t cp = 0;
    for (int i = 0; i < count; ++i) {
      if (!is_hex(peek_char())) {
        fail(span, std::string("truncated ") + what + " escape in string literal");
        return false;
      }
      cp = cp * 16 + hex_value(peek_char());
      advance_char();
    }
    if (cp > 0x10FFFF) {
      fail(span, std::string("invalid ") + what + " escape in string literal");
      return false;
    }
    append_utf8(out, cp);
    return true;
  };
  switch (c) {
    case '\n': advance_char(); return true;  // continuation inside the string
    case '\r':
      advance_char();
      if (peek_char() == '\n') advance_char();
      return true;
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case '\\': out += '\\'; break;
    case '\'': out += '\''; break;
    case '"': out += '"'; break;
    case 'a': out += '\a'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'v': out += '\v'; break;
    case 'x': advance_char(); return read_hex(2, "\\xXX");
    case 'u': advance_char(); return read_hex(4, "\\uXXXX");
    case 'U': advance_char(); return read_hex(8, "\\UXXXXXXXX");
    case 'N': fail(span, "\\N{...} escapes are not supported in staged programs"); return false;
    default:
      if (is_oct(c)) {
        uint32_t cp = 0;
        for (int i = 0; i < 3 && is_oct(peek_char()); ++i) {
          cp = cp * 8 + (peek_char() - '0');
          advance_char();
        }
        append_utf8(out, cp);
        return true;
      }
      out += '\\';  // unknown escapes keep their backslash, as in Python
      out += c;
      break;
  }
  advance_char();
  return true;
}


// One replacement field of an f-string, {expression[=][!conversion][:spec]}, read
// after its '{' up to its '}': nullopt, or the error token.
std::optional<Token> Lexer::lex_fstring_field(FStringField& f, char quote, bool triple, uint32_t field_line,
                                               uint32_t field_col) {
  const size_t depth = brackets_.size();
  auto at_end = [&] {
    return peek_char() == quote && (!triple || (peek_char(1) == quote && peek_char(2) == quote));
  };
  for (;;) {
    while (peek_char() == ' ' || peek_char() == '\t' || (triple && peek_char() == '\n')) advance_char();
    if (pos_ >= src_.text.size() || at_end() || (peek_char() == '\n' && !triple)) {
      brackets_.resize(depth);
      return fail(span_from(field_line, field_col), "f-string: expecting '}'");
    }
    const char d = peek_char();
    if (brackets_.size() == depth) {
      if (d == '}') break;
      if (d == '=' && peek_char(1) != '=' && !f.expr.empty() && !f.debug && f.conversion.empty()) {
        advance_char();
        while (peek_char() == ' ') advance_char();
        f.debug = true;
        f.debug_end = pos_;
        continue;
      }
      if (d == '!' && peek_char(1) != '=') {
        advance_char();
        while (is_name_char(peek_char())) f.conversion += peek_char(), advance_char();
        if (f.conversion != "r" && f.conversion != "s" && f.conversion != "a")
          return fail(span_from(field_line, field_col), "f-string: invalid conversion character '" + f.conversion +
                                                            "': expected 's', 'r', or 'a'");
        continue;
      }
      if (d == ':') {
        advance_char();
        while (pos_ < src_.text.size() && peek_char() != '}' && !at_end() && peek_char() != '\n') {
          if (peek_char() == '{')
            return fail(span_from(field_line, field_col),
                        "f-string: a replacement field inside a format spec is not supported");
          f.spec += peek_char();
          advance_char();
        }
        if (peek_char() != '}') return fail(span_from(field_line, field_col), "f-string: expecting '}'");
        break;
      }
    }
    if (!f.conversion.empty() || f.debug)
      return fail(span_from(field_line, field_col), "f-string: expecting '}'");
    Token t = is_name_start(d)                             ? lex_name_or_string()
              : is_dec(d) || (d == '.' && is_dec(peek_char(1))) ? lex_number()
              : d == '"' || d == '\''                     ? lex_string(pos_, line_, col(), /*raw=*/false)
                                                           : lex_operator();
    if (t.kind == TokenKind::kError) return t;
    f.expr.push_back(std::move(t));
  }
  return std::nullopt;
}

Token Lexer::lex_fstring(uint32_t line, uint32_t column, bool raw) {
  if (in_fstring_) return fail(span_from(line, column), "f-strings nested inside an f-string are not supported");
  struct Flag {
    bool& f;
    ~Flag() { f = false; }
  } flag{in_fstring_ = true};
  const char quote = peek_char();
  const bool triple = peek_char(1) == quote && peek_char(2) == quote;
  for (int i = 0; i < (triple ? 3 : 1); ++i) advance_char();
  auto synthetic = [](TokenKind kind, std::string text, std::string value = {}) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.str_value = std::move(value);
    return t;
  };
  auto literal = [&](std::string value) { return synthetic(TokenKind::kString, "'...'", std::move(value)); };
  auto op = [&](const char* text) { return synthetic(TokenKind::kOp, text); };
  auto at_end = [&] {
    return peek_char() == quote && (!triple || (peek_char(1) == quote && peek_char(2) == quote));
  };
  auto unterminated = [&] {
    return fail(span_from(line, column), triple ? "unterminated triple-quoted f-string" : "unterminated f-string");
  };
  std::vector<Token> out{synthetic(TokenKind::kName, "$fstring"), op("(")};
  std::string text;  // the literal part being read
  for (;;) {
    if (pos_ >= src_.text.size() || (peek_char() == '\n' && !triple)) return unterminated();
    const char c = peek_char();
    if (at_end()) {
      for (int i = 0; i < (triple ? 3 : 1); ++i) advance_char();
      break;
    }
    if (c == '\\') {
      if (!lex_backslash(text, raw)) return final_;
      continue;
    }
    if ((c == '{' || c == '}') && peek_char(1) == c) {  // {{ and }} are braces
      text += c;
      advance_char();
      advance_char();
      continue;
    }
    if (c == '}') {
      const uint32_t l = line_, k = col();
      advance_char();
      return fail(span_from(l, k), "f-string: single '}' is not allowed");
    }
    if (c != '{') {
      text += c;
      advance_char();
      continue;
    }
    // A replacement field: {expression[=][!conversion][:spec]}.
    const uint32_t field_line = line_, field_col = col();
    advance_char();
    const size_t expr_start = pos_;
    FStringField field;
    if (std::optional<Token> error = lex_fstring_field(field, quote, triple, field_line, field_col)) return *error;
    std::vector<Token>& expr = field.expr;
    std::string& conversion = field.conversion;
    const std::string& spec = field.spec;
    const bool debug = field.debug;
    const size_t debug_end = field.debug_end;
    advance_char();  // '}'
    if (expr.empty()) return fail(span_from(field_line, field_col), "f-string: empty expression not allowed");
    // {x=} shows the expression's text, then (without a spec) its repr.
    if (debug) {
      text += src_.text.substr(expr_start, debug_end - expr_start);
      if (conversion.empty() && spec.empty()) conversion.push_back('r');
    }
    out.push_back(literal(std::move(text)));
    text.clear();
    out.push_back(op(","));
    out.push_back(op("("));
    for (Token& t : expr) out.push_back(std::move(t));
    out.push_back(op(")"));
    out.push_back(op(","));
    out.push_back(literal(conversion));
    out.push_back(op(","));
    out.push_back(literal(spec));
    out.push_back(op(","));
  }
  out.push_back(literal(std::move(text)));
  out.push_back(op(")"));
  const SourceSpan whole = span_from(line, column);
  for (Token& t : out)
    if (t.span.line == 0) t.span = whole;
  queued_.assign(out.begin() + 1, out.end());
  next_queued_ = 0;
  return out[0];
}

}  // namespace sg::compiler
