// The parser's state, shared by parser.cc (tokens, module), parser_expr.cc and
// parser_stmt.cc. Internal to the frontend; the interface is parser.h.
//
// Error handling: after the first syntax error the token stream reads as END, so
// every loop ends and every parse function still returns a node (a kNone
// an error expression where nothing could be parsed); parse_module then returns null.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ast.h"
#include "lexer.h"

namespace sg::compiler {

class Parser {
 public:
  Parser(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);
  std::unique_ptr<Module> parse_module();

 private:
  // Tokens (parser.cc). One token of lookahead, read only when asked for, so the
  // lexer can skip a block right after a ':' was taken.
  const Token& peek();
  Token take();
  bool at(TokenKind kind) { return peek().kind == kind; }
  bool at_op(std::string_view op) { return peek().is_op(op); }
  bool at_keyword(std::string_view kw) { return peek().is_keyword(kw); }
  bool accept_op(std::string_view op);
  bool accept_keyword(std::string_view kw);
  void expect_op(std::string_view op, std::string_view message);
  void expect_keyword(std::string_view kw, std::string_view message);
  std::string expect_name(std::string_view message);
  void expect_newline();
  void syntax_error(SourceSpan span, std::string message);
  void error(SourceSpan span, std::string message);  // reported; parsing goes on
  SourceSpan span_from(const SourceSpan& start) const;  // start .. last taken token
  bool starts_expression();

  // Expressions (parser_expr.cc).
  ExprPtr parse_test();
  ExprPtr parse_test_list();
  ExprPtr parse_target_list();
  ExprPtr parse_star_or(ExprPtr (Parser::*operand)());
  ExprPtr parse_or_test();
  ExprPtr parse_and_test();
  ExprPtr parse_not_test();
  ExprPtr parse_comparison();
  ExprPtr parse_or_expr() { return parse_binary(0); }
  ExprPtr parse_binary(int level);
  ExprPtr parse_factor();
  ExprPtr parse_power();
  ExprPtr parse_primary();
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_subscript(ExprPtr value);
  ExprPtr parse_subscript_item();
  ExprPtr parse_atom();
  ExprPtr parse_strings();
  ExprPtr parse_paren();
  ExprPtr parse_list();
  ExprPtr parse_brace();
  ExprPtr parse_unsupported_keyword_expr();
  ExprPtr parse_lambda();
  void parse_comprehension(std::vector<Comprehension>& generators);
  ExprPtr error_expr(SourceSpan span);

  // Statements (parser_stmt.cc).
  void parse_statement(std::vector<StmtPtr>& out, bool module_level);
  void parse_simple_statements(std::vector<StmtPtr>& out);
  StmtPtr parse_small_statement();
  StmtPtr parse_expr_statement();
  StmtPtr parse_import();
  StmtPtr parse_from_import();
  StmtPtr parse_if(bool module_level);
  StmtPtr parse_main_guard(StmtPtr stmt);
  StmtPtr parse_while();
  StmtPtr parse_for();
  StmtPtr parse_decorated();
  StmtPtr parse_def(std::vector<ExprPtr> decorators);
  StmtPtr parse_class(std::vector<ExprPtr> decorators);
  StmtPtr parse_try();
  void parse_params(FunctionDef& func);
  bool parse_star_param(FunctionDef& func, ParamKind& next, bool in_lambda);
  std::vector<StmtPtr> parse_suite(const Token& header, std::string_view what);
  void reject_loop_else(std::string_view loop);
  void reject_compound_statement(const Token& keyword);
  void skip_to_end_of_statement();
  void skip_block_statement();
  void check_target(const Expr& target, bool allow_unpacking);

  // Bounds the recursion so that deeply nested input is an error, not a stack overflow.
  static constexpr int kMaxDepth = 300;
  struct DepthScope {
    explicit DepthScope(Parser& parser) : p(parser) { ++p.depth_; }
    ~DepthScope() { --p.depth_; }
    Parser& p;
  };
  bool too_deep();
  // A chain of operators, calls, subscripts or attributes (`a + a + ...`,
  // `x.y.z...`) nests without recursing; its height is bounded here instead, as
  // CPython bounds it ("maximum recursion depth exceeded during compilation").
  // Returns false (and reports at `op`) once `e` is nested deeper than kMaxHeight.
  static constexpr uint32_t kMaxHeight = 3000;
  bool check_height(Expr& e, SourceSpan op);

  Lexer lexer_;
  DiagnosticEngine& diags_;
  uint32_t file_;
  Token tok_;
  bool has_tok_ = false;
  bool failed_ = false;
  SourceSpan prev_;  // span of the last token taken
  int depth_ = 0;
};

}  // namespace sg::compiler
