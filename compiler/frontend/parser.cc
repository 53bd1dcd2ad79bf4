#include "parser.h"

#include "parser_impl.h"

namespace sg::compiler {

Parser::Parser(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags)
    : lexer_(sources, file, diags), diags_(diags), file_(file) {
  prev_ = SourceSpan{file, 1, 1, 1, 1};
}

const Token& Parser::peek() {
  if (!has_tok_) {
    if (!failed_) tok_ = lexer_.next();
    if (failed_ || tok_.kind == TokenKind::kError) {
      failed_ = true;
      tok_ = Token{};
      tok_.kind = TokenKind::kEnd;
      tok_.span = prev_;
    }
    has_tok_ = true;
  }
  return tok_;
}

Token Parser::take() {
  peek();
  has_tok_ = false;
  prev_ = tok_.span;
  return tok_;
}

bool Parser::accept_op(std::string_view op) {
  if (!at_op(op)) return false;
  take();
  return true;
}

bool Parser::accept_keyword(std::string_view kw) {
  if (!at_keyword(kw)) return false;
  take();
  return true;
}

void Parser::expect_op(std::string_view op, std::string_view message) {
  if (accept_op(op)) return;
  syntax_error(peek().span, std::string(message) + ", found " + describe_token(peek()));
}

void Parser::expect_keyword(std::string_view kw, std::string_view message) {
  if (accept_keyword(kw)) return;
  syntax_error(peek().span, std::string(message) + ", found " + describe_token(peek()));
}

std::string Parser::expect_name(std::string_view message) {
  if (at(TokenKind::kName)) return take().text;
  syntax_error(peek().span, std::string(message) + ", found " + describe_token(peek()));
  return "";
}

void Parser::expect_newline() {
  if (at(TokenKind::kNewline)) {
    take();
    return;
  }
  syntax_error(peek().span, "expected a newline or ';' after the statement, found " + describe_token(peek()));
}

void Parser::syntax_error(SourceSpan span, std::string message) {
  if (failed_) return;
  diags_.error(span, std::move(message));
  failed_ = true;
  has_tok_ = false;  // the next peek() reads END
}

void Parser::error(SourceSpan span, std::string message) {
  if (!failed_) diags_.error(span, std::move(message));
}

bool Parser::too_deep() {
  if (depth_ <= kMaxDepth) return false;
  syntax_error(peek().span, "expression is nested too deeply");
  return true;
}

SourceSpan Parser::span_from(const SourceSpan& start) const {
  return SourceSpan{start.file, start.line, start.col, prev_.end_line, prev_.end_col};
}

bool Parser::starts_expression() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::kName:
    case TokenKind::kInt:
    case TokenKind::kFloat:
    case TokenKind::kString: return true;
    case TokenKind::kKeyword:
      return t.text == "True" || t.text == "False" || t.text == "None" || t.text == "not" ||
             t.text == "lambda" || t.text == "await" || t.text == "yield";
    case TokenKind::kOp:
      return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+" ||
             t.text == "~" || t.text == "..." || t.text == "*";
    default: return false;
  }
}

std::unique_ptr<Module> Parser::parse_module() {
  size_t errors_before = diags_.error_count();
  auto module = std::make_unique<Module>();
  module->file = file_;
  while (!at(TokenKind::kEnd)) parse_statement(module->body, /*module_level=*/true);
  if (failed_ || diags_.error_count() > errors_before) return nullptr;
  std::vector<StmtPtr>& body = module->body;
  if (!body.empty() && body[0]->kind == StmtKind::kExpr && body[0]->value->kind == ExprKind::kString) {
    body.erase(body.begin());  // the module docstring
  }
  return module;
}

std::unique_ptr<Module> parse_module(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  if (file >= sources.size()) return nullptr;
  Parser parser(sources, file, diags);
  return parser.parse_module();
}

}  // namespace sg::compiler
