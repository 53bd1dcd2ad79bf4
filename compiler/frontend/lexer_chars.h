// Character classes shared by the lexer's files. Internal to the frontend.
#pragma once

namespace sg::compiler::lexer_chars {

constexpr bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;  // UTF-8 identifiers
}
constexpr bool is_dec(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_name_char(char c) { return is_name_start(c) || is_dec(c); }
constexpr bool is_hex(char c) { return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr bool is_oct(char c) { return c >= '0' && c <= '7'; }
constexpr bool is_bin(char c) { return c == '0' || c == '1'; }

}  // namespace sg::compiler::lexer_chars
