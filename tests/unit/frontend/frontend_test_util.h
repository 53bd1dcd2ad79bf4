// Test helpers for the frontend: parse a source text and print the AST as a small
// s-expression, so tests compare one readable string.
#pragma once

#include <memory>
#include <string>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace sg::compiler::testing {

std::string dump_expr(const Expr& e);
std::string dump_stmt(const Stmt& s);
std::string dump_body(const std::vector<StmtPtr>& body);  // "[s1 s2]"

struct ParseResult {
  std::unique_ptr<Module> module;  // null when there were errors
  std::string errors;              // the diagnostics in text form, with source lines
  std::string locations;           // "LINE:COL: MESSAGE" per diagnostic, one a line
};

ParseResult parse_source(const std::string& text, const std::string& path = "model.py");

// The module's statements dumped one a line, or "ERRORS\n" + locations.
std::string parse_dump(const std::string& text);

// The expression statement `text` dumped, or the errors (parsed as line 2).
std::string expr_dump(const std::string& text);

}  // namespace sg::compiler::testing
