// Statements: the stmt .. suite rules of the grammar in parser.h, and the
// constructs outside the subset, reported at their keyword.
#include <array>
#include <utility>

#include "parser_impl.h"

namespace sg::compiler {
namespace {

StmtPtr make_stmt(StmtKind kind, SourceSpan span) { return std::make_unique<Stmt>(kind, span); }

constexpr std::array<std::pair<std::string_view, BinOp>, 13> kAugOps = {{
    {"+=", BinOp::kAdd}, {"-=", BinOp::kSub}, {"*=", BinOp::kMul}, {"/=", BinOp::kDiv},
    {"//=", BinOp::kFloorDiv}, {"%=", BinOp::kMod}, {"**=", BinOp::kPow}, {"@=", BinOp::kMatMul},
    {"&=", BinOp::kBitAnd}, {"|=", BinOp::kBitOr}, {"^=", BinOp::kBitXor}, {">>=", BinOp::kRShift},
    {"<<=", BinOp::kLShift},
}};

bool is_main_guard(const Expr& test) {
  if (test.kind != ExprKind::kCompare || test.cmp_ops.size() != 1 || test.cmp_ops[0] != CmpOp::kEq) return false;
  auto is_name = [](const Expr& e) { return e.kind == ExprKind::kName && e.name == "__name__"; };
  auto is_main = [](const Expr& e) { return e.kind == ExprKind::kString && e.str_value == "__main__"; };
  const Expr& l = *test.a;
  const Expr& r = *test.elts[0];
  return (is_name(l) && is_main(r)) || (is_main(l) && is_name(r));
}

const char* target_description(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kCall: return "a function call";
    case ExprKind::kInt:
    case ExprKind::kFloat:
    case ExprKind::kString:
    case ExprKind::kBool:
    case ExprKind::kNone:
    case ExprKind::kEllipsis:
    case ExprKind::kDict: return "a literal";
    case ExprKind::kCompare: return "a comparison";
    case ExprKind::kIfExp: return "a conditional expression";
    case ExprKind::kListComp: return "a list comprehension";
    case ExprKind::kDictComp: return "a dict comprehension";
    case ExprKind::kGenExp: return "a generator expression";
    default: return "an expression";
  }
}

}  // namespace

void Parser::parse_statement(std::vector<StmtPtr>& out, bool module_level) {
  const Token& t = peek();
  if (t.kind == TokenKind::kIndent) {
    syntax_error(t.span, "unexpected indent");
    return;
  }
  if (t.kind == TokenKind::kNewline || t.kind == TokenKind::kDedent) {  // defensive: cannot start a statement
    syntax_error(t.span, "expected a statement, found " + describe_token(t));
    return;
  }
  if (t.is_op("@")) {
    if (StmtPtr def = parse_decorated()) out.push_back(std::move(def));
    return;
  }
  if (t.kind == TokenKind::kKeyword) {
    const std::string& kw = t.text;
    if (kw == "if") {
      out.push_back(parse_if(module_level));
      return;
    }
    if (kw == "while") {
      out.push_back(parse_while());
      return;
    }
    if (kw == "for") {
      out.push_back(parse_for());
      return;
    }
    if (kw == "def") {
      out.push_back(parse_def({}));
      return;
    }
    if (kw == "class") {
      out.push_back(parse_class({}));
      return;
    }
    if (kw == "try") {
      out.push_back(parse_try());
      return;
    }
    if (kw == "with" || kw == "async") {
      reject_compound_statement(take());
      return;
    }
    if (kw == "elif" || kw == "else" || kw == "except" || kw == "finally") {
      syntax_error(t.span, "'" + kw + "' without a matching statement before it");
      return;
    }
  }
  parse_simple_statements(out);
}

void Parser::parse_simple_statements(std::vector<StmtPtr>& out) {
  for (;;) {
    StmtPtr s = parse_small_statement();
    if (s) out.push_back(std::move(s));
    if (!accept_op(";") || at(TokenKind::kNewline)) break;
  }
  expect_newline();
}

StmtPtr Parser::parse_small_statement() {
  const Token& t = peek();
  if (t.kind != TokenKind::kKeyword) return parse_expr_statement();
  const std::string kw = t.text;
  if (kw == "pass" || kw == "break" || kw == "continue") {
    Token tok = take();
    StmtKind kind = kw == "pass" ? StmtKind::kPass : kw == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    return make_stmt(kind, tok.span);
  }
  if (kw == "return") {
    auto s = make_stmt(StmtKind::kReturn, take().span);
    if (starts_expression()) s->value = parse_test_list();
    s->span = span_from(s->span);
    return s;
  }
  if (kw == "assert") {
    auto s = make_stmt(StmtKind::kAssert, take().span);
    s->test = parse_test();
    if (accept_op(",")) s->msg = parse_test();
    s->span = span_from(s->span);
    return s;
  }
  if (kw == "import") return parse_import();
  if (kw == "from") return parse_from_import();
  if (kw == "global" || kw == "nonlocal") {
    auto s = make_stmt(kw == "global" ? StmtKind::kGlobal : StmtKind::kNonlocal, take().span);
    do {
      s->names.push_back(expect_name("expected a name after '" + kw + "'"));
    } while (accept_op(","));
    s->span = span_from(s->span);
    return s;
  }
  if (kw == "del") {
    auto s = make_stmt(StmtKind::kDel, take().span);
    ExprPtr targets = parse_target_list();
    if (targets->kind == ExprKind::kTuple) {
      for (ExprPtr& item : targets->elts) s->targets.push_back(std::move(item));
    } else {
      s->targets.push_back(std::move(targets));
    }
    for (const ExprPtr& item : s->targets) check_target(*item, /*allow_unpacking=*/false);
    s->span = span_from(s->span);
    return s;
  }
  if (kw == "raise") {
    auto s = make_stmt(StmtKind::kRaise, take().span);
    if (starts_expression()) {
      s->value = parse_test();
      if (accept_keyword("from")) s->msg = parse_test();  // the cause: evaluated, not kept
    }
    s->span = span_from(s->span);
    return s;
  }
  return parse_expr_statement();
}

StmtPtr Parser::parse_expr_statement() {
  ExprPtr first = parse_test_list();
  SourceSpan start = first->span;
  if (at_op("=")) {
    auto s = make_stmt(StmtKind::kAssign, start);
    s->targets.push_back(std::move(first));
    while (accept_op("=")) s->targets.push_back(parse_test_list());
    s->value = std::move(s->targets.back());
    s->targets.pop_back();
    for (const ExprPtr& target : s->targets) check_target(*target, /*allow_unpacking=*/true);
    s->span = span_from(start);
    return s;
  }
  if (at_op(":")) {
    take();
    auto s = make_stmt(StmtKind::kAnnAssign, start);
    if (first->kind == ExprKind::kTuple || first->kind == ExprKind::kList) {
      error(first->span, "only a single target (not a tuple or list) can be annotated");
    }
    check_target(*first, /*allow_unpacking=*/false);
    s->target = std::move(first);
    s->annotation = parse_test();
    if (accept_op("=")) s->value = parse_test_list();
    s->span = span_from(start);
    return s;
  }
  for (const auto& [text, op] : kAugOps) {
    if (!at_op(text)) continue;
    const SourceSpan op_span = take().span;
    auto s = make_stmt(StmtKind::kAugAssign, start);
    s->aug_op = op;
    s->op_span = op_span;
    if (first->kind == ExprKind::kTuple || first->kind == ExprKind::kList) {
      error(first->span, "a tuple or list cannot be the target of an augmented assignment");
    }
    check_target(*first, /*allow_unpacking=*/false);
    s->target = std::move(first);
    s->value = parse_test_list();
    s->span = span_from(start);
    return s;
  }
  auto s = make_stmt(StmtKind::kExpr, start);
  s->value = std::move(first);
  return s;
}

void Parser::check_target(const Expr& target, bool allow_unpacking) {
  switch (target.kind) {
    case ExprKind::kName:
    case ExprKind::kAttribute:
    case ExprKind::kSubscript: return;
    case ExprKind::kTuple:
    case ExprKind::kList:
      if (!allow_unpacking) return;  // reported by the caller
      if (target.elts.empty()) break;
      for (const ExprPtr& e : target.elts) check_target(*e, true);
      return;
    case ExprKind::kStarred:
      error(target.span, "starred assignment targets ('a, *rest = ...') are not supported in staged programs");
      return;
    default: break;
  }
  error(target.span, std::string("cannot assign to ") + target_description(target));
}

StmtPtr Parser::parse_import() {
  auto s = make_stmt(StmtKind::kImport, take().span);
  do {
    ImportName item;
    item.span = peek().span;
    item.name = expect_name("expected a module name after 'import'");
    while (accept_op(".")) item.name += "." + expect_name("expected a module name after '.'");
    if (accept_keyword("as")) item.alias = expect_name("expected a name after 'as'");
    item.span = span_from(item.span);
    s->imports.push_back(std::move(item));
  } while (accept_op(","));
  s->span = span_from(s->span);
  return s;
}

StmtPtr Parser::parse_from_import() {
  auto s = make_stmt(StmtKind::kImportFrom, take().span);
  if (at_op(".") || at_op("...")) {
    error(peek().span, "relative imports are not supported in staged programs");
    while (accept_op(".") || accept_op("...")) {
    }
  }
  if (!at_keyword("import")) {
    s->module = expect_name("expected a module name after 'from'");
    while (accept_op(".")) s->module += "." + expect_name("expected a module name after '.'");
  }
  expect_keyword("import", "expected 'import' after the module name");
  if (at_op("*")) {
    error(take().span, "'from ... import *' is not supported in staged programs");
    return nullptr;
  }
  bool parens = accept_op("(");
  do {
    if (parens && at_op(")")) break;  // trailing comma
    ImportName item;
    item.span = peek().span;
    item.name = expect_name("expected a name to import");
    if (accept_keyword("as")) item.alias = expect_name("expected a name after 'as'");
    item.span = span_from(item.span);
    s->imports.push_back(std::move(item));
  } while (accept_op(","));
  if (parens) expect_op(")", "expected ',' or ')' in the import list");
  s->span = span_from(s->span);
  return s;
}

StmtPtr Parser::parse_if(bool module_level) {
  Token kw = take();  // 'if' or 'elif'
  auto s = make_stmt(StmtKind::kIf, kw.span);
  s->test = parse_test();
  s->span = span_from(kw.span);
  expect_op(":", "expected ':' after the " + kw.text + " condition");
  if (module_level && kw.text == "if" && is_main_guard(*s->test)) return parse_main_guard(std::move(s));
  s->body = parse_suite(kw, "'" + kw.text + "' statement");
  if (at_keyword("elif")) {
    s->orelse.push_back(parse_if(false));
  } else if (at_keyword("else")) {
    Token else_kw = take();
    expect_op(":", "expected ':' after 'else'");
    s->orelse = parse_suite(else_kw, "'else'");
  }
  return s;
}

// The ':' was just taken, and nothing after it tokenized: the lexer steps over the
// bodies, which may hold any eager-mode Python.
StmtPtr Parser::parse_main_guard(StmtPtr stmt) {
  if (failed_) return stmt;
  if (!lexer_.skip_suite()) {
    syntax_error(peek().span, "expected an indented block after the 'if' statement on line " +
                                  std::to_string(stmt->span.line));
    return stmt;
  }
  while (!failed_ && (at_keyword("elif") || at_keyword("else"))) {
    Token kw = take();
    if (kw.text == "elif") parse_test();
    expect_op(":", "expected ':' after '" + kw.text + "'");
    if (!failed_ && !lexer_.skip_suite()) {
      syntax_error(peek().span, "expected an indented block after '" + kw.text + "' on line " +
                                    std::to_string(kw.span.line));
    }
  }
  return stmt;
}

StmtPtr Parser::parse_while() {
  Token kw = take();
  auto s = make_stmt(StmtKind::kWhile, kw.span);
  s->test = parse_test();
  s->span = span_from(kw.span);
  expect_op(":", "expected ':' after the while condition");
  s->body = parse_suite(kw, "'while' statement");
  reject_loop_else("while");
  return s;
}

StmtPtr Parser::parse_for() {
  Token kw = take();
  auto s = make_stmt(StmtKind::kFor, kw.span);
  s->target = parse_target_list();
  check_target(*s->target, /*allow_unpacking=*/true);
  expect_keyword("in", "expected 'in' after the for target");
  s->iter = parse_test_list();
  s->span = span_from(kw.span);
  expect_op(":", "expected ':' after the for iterable");
  s->body = parse_suite(kw, "'for' statement");
  reject_loop_else("for");
  return s;
}

void Parser::reject_loop_else(std::string_view loop) {
  if (!at_keyword("else")) return;
  Token kw = take();
  error(kw.span, "'" + std::string(loop) + " ... else' is not supported in staged programs");
  expect_op(":", "expected ':' after 'else'");
  parse_suite(kw, "'else'");
}

StmtPtr Parser::parse_decorated() {
  std::vector<ExprPtr> decorators;
  while (accept_op("@")) {
    decorators.push_back(parse_test());
    expect_newline();
  }
  if (at_keyword("def")) return parse_def(std::move(decorators));
  if (at_keyword("class")) return parse_class(std::move(decorators));
  if (at_keyword("async")) {
    reject_compound_statement(take());
    return nullptr;
  }
  syntax_error(peek().span, "expected 'def' after the decorator, found " + describe_token(peek()));
  return nullptr;
}

StmtPtr Parser::parse_def(std::vector<ExprPtr> decorators) {
  Token kw = take();  // 'def'
  auto s = make_stmt(StmtKind::kFunctionDef, kw.span);
  s->func = std::make_unique<FunctionDef>();
  FunctionDef& func = *s->func;
  func.decorators = std::move(decorators);
  func.name_span = peek().span;
  func.name = expect_name("expected a function name after 'def'");
  s->span = span_from(kw.span);
  expect_op("(", "expected '(' after the function name");
  parse_params(func);
  expect_op(")", "expected ',' or ')' in the parameter list");
  if (accept_op("->")) func.returns = parse_test();
  expect_op(":", "expected ':' after the function signature");
  func.body = parse_suite(kw, "the definition of '" + func.name + "'");
  if (!func.body.empty() && func.body[0]->kind == StmtKind::kExpr &&
      func.body[0]->value->kind == ExprKind::kString) {
    func.docstring = func.body[0]->value->str_value;
    func.body.erase(func.body.begin());
  }
  return s;
}

StmtPtr Parser::parse_class(std::vector<ExprPtr> decorators) {
  Token kw = take();  // 'class'
  auto s = make_stmt(StmtKind::kClassDef, kw.span);
  s->cls = std::make_unique<ClassDef>();
  ClassDef& cls = *s->cls;
  cls.decorators = std::move(decorators);
  cls.name_span = peek().span;
  cls.name = expect_name("expected a class name after 'class'");
  if (accept_op("(")) {
    while (!at_op(")") && !at(TokenKind::kEnd)) {
      if (at(TokenKind::kName) && !at_op("=")) {
        ExprPtr base = parse_test();
        if (at_op("=")) {
          error(base->span, "class keyword arguments (metaclass=...) are not supported in staged programs");
          take();
          parse_test();
        } else {
          cls.bases.push_back(std::move(base));
        }
      } else {
        cls.bases.push_back(parse_test());
      }
      if (!accept_op(",")) break;
    }
    expect_op(")", "expected ',' or ')' in the list of base classes");
  }
  s->span = span_from(kw.span);
  expect_op(":", "expected ':' after the class name");
  cls.body = parse_suite(kw, "definition of class '" + cls.name + "'");
  if (!cls.body.empty() && cls.body[0]->kind == StmtKind::kExpr && cls.body[0]->value->kind == ExprKind::kString) {
    cls.docstring = cls.body[0]->value->str_value;
    cls.body.erase(cls.body.begin());
  }
  return s;
}

StmtPtr Parser::parse_try() {
  Token kw = take();  // 'try'
  auto s = make_stmt(StmtKind::kTry, kw.span);
  expect_op(":", "expected ':' after 'try'");
  s->body = parse_suite(kw, "'try' statement");
  while (at_keyword("except")) {
    Token ex = take();
    ExceptHandler h;
    h.span = ex.span;
    if (at_op("*")) error(take().span, "'except*' is not supported in staged programs");
    if (!at_op(":")) {
      h.type = parse_test();
      if (accept_keyword("as")) h.name = expect_name("expected a name after 'as'");
    }
    h.span = span_from(ex.span);
    expect_op(":", "expected ':' after the except clause");
    h.body = parse_suite(ex, "'except' clause");
    s->handlers.push_back(std::move(h));
  }
  if (!s->handlers.empty() && at_keyword("else")) {
    Token el = take();
    expect_op(":", "expected ':' after 'else'");
    s->orelse = parse_suite(el, "'else' clause");
  }
  if (at_keyword("finally")) {
    Token fin = take();
    expect_op(":", "expected ':' after 'finally'");
    s->finalbody = parse_suite(fin, "'finally' clause");
  }
  if (s->handlers.empty() && s->finalbody.empty())
    syntax_error(peek().span, "expected 'except' or 'finally' after the 'try' block on line " +
                                  std::to_string(kw.span.line));
  return s;
}

// `*args`, a bare `*`, or `**kwargs` (with an annotation in a def): the
// parameters after a `*` are keyword-only. False when none is next.
bool Parser::parse_star_param(FunctionDef& func, ParamKind& next, bool in_lambda) {
  if (!at_op("*") && !at_op("**") && !at_op("/")) return false;
  const std::string where = in_lambda ? "in the lambda expression" : "in the function definition";
  Token marker = take();
  if (marker.text == "/") {
    error(marker.span, "positional-only parameters ('/') are not supported in staged programs");
    return true;
  }
  const bool after_kwargs = !func.params.empty() && func.params.back().kind == ParamKind::kVarKeyword;
  if (after_kwargs) error(marker.span, "no parameter may follow '**" + func.params.back().name + "'");
  if (marker.text == "*" && next != ParamKind::kPositional)
    error(marker.span, "'*' may appear only once " + where);
  if (marker.text == "*") next = ParamKind::kKeywordOnly;
  if (marker.text == "*" && !at(TokenKind::kName)) return true;  // a bare '*'
  Param p;
  p.span = peek().span;
  p.kind = marker.text == "*" ? ParamKind::kVarPositional : ParamKind::kVarKeyword;
  p.name = expect_name(marker.text == "*" ? "expected a parameter name after '*'" : "expected a parameter name after '**'");
  for (const Param& other : func.params)
    if (other.name == p.name) error(p.span, "duplicate parameter '" + p.name + "' " + where);
  if (!in_lambda && accept_op(":")) p.annotation = parse_test();
  if (at_op("=")) error(peek().span, "a '" + std::string(marker.text) + "' parameter cannot have a default");
  func.params.push_back(std::move(p));
  return true;
}

void Parser::parse_params(FunctionDef& func) {
  bool seen_default = false;
  ParamKind next = ParamKind::kPositional;
  while (!at_op(")") && !at(TokenKind::kEnd)) {
    if (!parse_star_param(func, next, /*in_lambda=*/false)) {
      Param p;
      p.span = peek().span;
      p.kind = next;
      p.name = expect_name("expected a parameter name");
      for (const Param& other : func.params) {
        if (other.name == p.name) error(p.span, "duplicate parameter '" + p.name + "' in the function definition");
      }
      if (!func.params.empty() && func.params.back().kind == ParamKind::kVarKeyword)
        error(p.span, "no parameter may follow '**" + func.params.back().name + "'");
      if (accept_op(":")) p.annotation = parse_test();
      if (accept_op("=")) {
        p.default_value = parse_test();
        seen_default = true;
      } else if (seen_default && p.kind == ParamKind::kPositional) {
        error(p.span, "parameter '" + p.name + "' without a default follows a parameter with a default");
      }
      func.params.push_back(std::move(p));
    }
    if (!accept_op(",")) break;
  }
}

std::vector<StmtPtr> Parser::parse_suite(const Token& header, std::string_view what) {
  std::vector<StmtPtr> body;
  if (!at(TokenKind::kNewline)) {  // `if x: y = 1`
    parse_simple_statements(body);
    return body;
  }
  take();
  if (!at(TokenKind::kIndent)) {
    syntax_error(peek().span, "expected an indented block after the " + std::string(what) + " on line " +
                                  std::to_string(header.span.line));
    return body;
  }
  take();
  while (!at(TokenKind::kDedent) && !at(TokenKind::kEnd)) parse_statement(body, /*module_level=*/false);
  if (at(TokenKind::kDedent)) take();
  return body;
}

void Parser::reject_compound_statement(const Token& keyword) {
  const std::string& kw = keyword.text;
  error(keyword.span, "'" + kw + "' statements are not supported in staged programs");
  skip_block_statement();
}

void Parser::skip_to_end_of_statement() {
  while (!at(TokenKind::kNewline) && !at(TokenKind::kEnd) && !at_op(";")) take();
}

// Steps over a compound statement's header and body by tokens; their content is
// not checked since the statement as a whole is already an error.
void Parser::skip_block_statement() {
  while (!at(TokenKind::kNewline) && !at(TokenKind::kEnd)) take();
  if (at(TokenKind::kNewline)) take();
  if (!at(TokenKind::kIndent)) return;
  take();
  for (int depth = 1; depth > 0 && !at(TokenKind::kEnd);) {
    Token t = take();
    if (t.kind == TokenKind::kIndent) ++depth;
    if (t.kind == TokenKind::kDedent) --depth;
  }
}

}  // namespace sg::compiler
