// Expressions: the test .. atom rules of the grammar in parser.h.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "parser_impl.h"

namespace sg::compiler {
namespace {

ExprPtr make_expr(ExprKind kind, SourceSpan span) { return std::make_unique<Expr>(kind, span); }

struct BinaryLevel {
  std::array<std::pair<std::string_view, BinOp>, 5> ops;
  size_t count;
};

// or_expr .. term, loosest first; each level is left-associative.
constexpr std::array<BinaryLevel, 6> kBinaryLevels = {{
    {{{{"|", BinOp::kBitOr}}}, 1},
    {{{{"^", BinOp::kBitXor}}}, 1},
    {{{{"&", BinOp::kBitAnd}}}, 1},
    {{{{"<<", BinOp::kLShift}, {">>", BinOp::kRShift}}}, 2},
    {{{{"+", BinOp::kAdd}, {"-", BinOp::kSub}}}, 2},
    {{{{"*", BinOp::kMul}, {"@", BinOp::kMatMul}, {"/", BinOp::kDiv}, {"//", BinOp::kFloorDiv}, {"%", BinOp::kMod}}}, 5},
}};

// Memoised on the node. The recursion stops at nodes already measured (each link
// of a chain is, as it is built), so it goes only through nodes that the parser
// built by recursing itself, and that recursion is bounded by kMaxDepth.
uint32_t height_of(Expr& e);

uint32_t max_height(const ExprPtr& e, uint32_t h) { return e ? std::max(h, height_of(*e)) : h; }

uint32_t height_of(Expr& e) {
  if (e.height != 0) return e.height;
  uint32_t h = 0;
  h = max_height(e.a, max_height(e.b, max_height(e.c, h)));
  for (const ExprPtr& x : e.elts) h = max_height(x, h);
  for (const ExprPtr& x : e.keys) h = max_height(x, h);
  for (const Keyword& k : e.keywords) h = max_height(k.value, h);
  for (const Comprehension& g : e.generators) {
    h = max_height(g.target, max_height(g.iter, h));
    for (const ExprPtr& x : g.ifs) h = max_height(x, h);
  }
  if (e.lambda_def) {
    for (const Param& p : e.lambda_def->params) h = max_height(p.default_value, h);
    for (const StmtPtr& s : e.lambda_def->body) h = max_height(s->value, h);
  }
  e.height = h + 1;
  return e.height;
}

}  // namespace

bool Parser::check_height(Expr& e, SourceSpan op) {
  if (height_of(e) <= kMaxHeight) return true;
  syntax_error(op, "expression is nested too deeply: more than " + std::to_string(kMaxHeight) +
                       " levels of operators, calls, subscripts or attributes (split it into several statements)");
  return false;
}

ExprPtr Parser::error_expr(SourceSpan span) { return make_expr(ExprKind::kNone, span); }

ExprPtr Parser::parse_test() {
  DepthScope scope(*this);
  if (too_deep()) return error_expr(prev_);
  if (at_keyword("lambda")) return parse_lambda();
  ExprPtr body = parse_or_test();
  if (!at_keyword("if")) return body;
  take();
  auto e = make_expr(ExprKind::kIfExp, body->span);
  e->a = parse_or_test();
  expect_keyword("else", "expected 'else' in the conditional expression");
  e->c = parse_test();
  e->b = std::move(body);
  e->span = span_from(e->span);
  return e;
}

// `*x` (a kStarred), or the operand.
ExprPtr Parser::parse_star_or(ExprPtr (Parser::*operand)()) {
  if (at_op("*")) {
    Token star = take();
    auto e = make_expr(ExprKind::kStarred, star.span);
    e->a = parse_or_expr();
    e->span = span_from(star.span);
    return e;
  }
  return (this->*operand)();
}

ExprPtr Parser::parse_test_list() {
  ExprPtr first = parse_star_or(&Parser::parse_test);
  if (!at_op(",")) return first;
  auto tuple = make_expr(ExprKind::kTuple, first->span);
  tuple->elts.push_back(std::move(first));
  while (accept_op(",") && starts_expression()) tuple->elts.push_back(parse_star_or(&Parser::parse_test));
  tuple->span = span_from(tuple->span);
  return tuple;
}

// Targets of 'for' stop before 'in', so they are parsed at the or_expr level.
ExprPtr Parser::parse_target_list() {
  ExprPtr first = parse_star_or(&Parser::parse_or_expr);
  if (!at_op(",")) return first;
  auto tuple = make_expr(ExprKind::kTuple, first->span);
  tuple->elts.push_back(std::move(first));
  while (accept_op(",") && starts_expression()) tuple->elts.push_back(parse_star_or(&Parser::parse_or_expr));
  tuple->span = span_from(tuple->span);
  return tuple;
}

ExprPtr Parser::parse_or_test() {
  ExprPtr first = parse_and_test();
  if (!at_keyword("or")) return first;
  auto e = make_expr(ExprKind::kBoolOp, first->span);
  e->bool_op = BoolOp::kOr;
  e->elts.push_back(std::move(first));
  while (accept_keyword("or")) e->elts.push_back(parse_and_test());
  e->span = span_from(e->span);
  return e;
}

ExprPtr Parser::parse_and_test() {
  ExprPtr first = parse_not_test();
  if (!at_keyword("and")) return first;
  auto e = make_expr(ExprKind::kBoolOp, first->span);
  e->bool_op = BoolOp::kAnd;
  e->elts.push_back(std::move(first));
  while (accept_keyword("and")) e->elts.push_back(parse_not_test());
  e->span = span_from(e->span);
  return e;
}

ExprPtr Parser::parse_not_test() {
  if (!at_keyword("not")) return parse_comparison();
  Token kw = take();
  DepthScope scope(*this);
  if (too_deep()) return error_expr(prev_);
  auto e = make_expr(ExprKind::kUnaryOp, kw.span);
  e->unary_op = UnaryOp::kNot;
  e->a = parse_not_test();
  e->span = span_from(kw.span);
  return e;
}

ExprPtr Parser::parse_comparison() {
  ExprPtr left = parse_or_expr();
  ExprPtr cmp;
  for (;;) {
    const Token& t = peek();
    CmpOp op;
    if (t.kind == TokenKind::kOp && t.text == "<") op = CmpOp::kLt;
    else if (t.kind == TokenKind::kOp && t.text == "<=") op = CmpOp::kLe;
    else if (t.kind == TokenKind::kOp && t.text == ">") op = CmpOp::kGt;
    else if (t.kind == TokenKind::kOp && t.text == ">=") op = CmpOp::kGe;
    else if (t.kind == TokenKind::kOp && t.text == "==") op = CmpOp::kEq;
    else if (t.kind == TokenKind::kOp && t.text == "!=") op = CmpOp::kNe;
    else if (t.is_keyword("in")) op = CmpOp::kIn;
    else if (t.is_keyword("is")) op = CmpOp::kIs;
    else if (t.is_keyword("not")) op = CmpOp::kNotIn;
    else break;
    const SourceSpan op_start = take().span;
    if (op == CmpOp::kIs && accept_keyword("not")) op = CmpOp::kIsNot;
    if (op == CmpOp::kNotIn) expect_keyword("in", "expected 'in' after 'not' in the comparison");
    if (!cmp) {
      cmp = make_expr(ExprKind::kCompare, left->span);
      cmp->a = std::move(left);
    }
    cmp->cmp_ops.push_back(op);
    cmp->op_spans.push_back(span_from(op_start));
    cmp->elts.push_back(parse_or_expr());
  }
  if (!cmp) return left;
  cmp->span = span_from(cmp->span);
  return cmp;
}

ExprPtr Parser::parse_binary(int level) {
  if (level == static_cast<int>(kBinaryLevels.size())) return parse_factor();
  const BinaryLevel& ops = kBinaryLevels[level];
  ExprPtr left = parse_binary(level + 1);
  for (;;) {
    const Token& t = peek();
    const std::pair<std::string_view, BinOp>* match = nullptr;
    for (size_t i = 0; i < ops.count; ++i) {
      if (t.is_op(ops.ops[i].first)) match = &ops.ops[i];
    }
    if (!match) return left;
    const SourceSpan op_span = take().span;
    auto e = make_expr(ExprKind::kBinOp, left->span);
    e->bin_op = match->second;
    e->op_spans.push_back(op_span);
    e->a = std::move(left);
    e->b = parse_binary(level + 1);
    e->span = span_from(e->span);
    if (!check_height(*e, op_span)) return error_expr(e->span);
    left = std::move(e);
  }
}

ExprPtr Parser::parse_factor() {
  const Token& t = peek();
  UnaryOp op;
  if (t.is_op("-")) op = UnaryOp::kNeg;
  else if (t.is_op("+")) op = UnaryOp::kPos;
  else if (t.is_op("~")) op = UnaryOp::kInvert;
  else return parse_power();
  Token tok = take();
  DepthScope scope(*this);
  if (too_deep()) return error_expr(prev_);
  auto e = make_expr(ExprKind::kUnaryOp, tok.span);
  e->unary_op = op;
  e->a = parse_factor();
  e->span = span_from(tok.span);
  return e;
}

ExprPtr Parser::parse_power() {
  if (at_keyword("await")) {
    Token kw = take();
    DepthScope scope(*this);
    if (too_deep()) return error_expr(prev_);
    error(kw.span, "'await' expressions are not supported in staged programs");
    parse_power();
    return error_expr(span_from(kw.span));
  }
  ExprPtr base = parse_primary();
  if (!at_op("**")) return base;
  const SourceSpan op_span = take().span;
  DepthScope scope(*this);
  if (too_deep()) return error_expr(prev_);
  auto e = make_expr(ExprKind::kBinOp, base->span);
  e->bin_op = BinOp::kPow;
  e->op_spans.push_back(op_span);
  e->a = std::move(base);
  e->b = parse_factor();  // right-assoc, and 2 ** -1 is allowed
  e->span = span_from(e->span);
  return e;
}

ExprPtr Parser::parse_primary() {
  ExprPtr e = parse_atom();
  for (;;) {
    const SourceSpan link = peek().span;
    if (at_op("(")) {
      e = parse_call(std::move(e));
    } else if (at_op("[")) {
      e = parse_subscript(std::move(e));
    } else if (accept_op(".")) {
      auto attr = make_expr(ExprKind::kAttribute, e->span);
      attr->name = expect_name("expected an attribute name after '.'");
      attr->a = std::move(e);
      attr->span = span_from(attr->span);
      e = std::move(attr);
    } else {
      return e;
    }
    if (!check_height(*e, link)) return error_expr(e->span);
  }
}

ExprPtr Parser::parse_call(ExprPtr callee) {
  auto call = make_expr(ExprKind::kCall, callee->span);
  call->a = std::move(callee);
  take();  // '('
  while (!at_op(")") && !at(TokenKind::kEnd)) {
    if (at_op("**")) {
      Token star = take();
      Keyword kw{"", parse_test(), star.span};
      kw.span = span_from(star.span);
      call->keywords.push_back(std::move(kw));
    } else if (at_op("*")) {
      call->elts.push_back(parse_star_or(&Parser::parse_test));
    } else {
      ExprPtr arg = parse_test();
      if (at_keyword("for")) {
        auto gen = make_expr(ExprKind::kGenExp, arg->span);
        gen->a = std::move(arg);
        parse_comprehension(gen->generators);
        gen->span = span_from(gen->span);
        call->elts.push_back(std::move(gen));
      } else if (at_op("=")) {
        Token eq = take();
        if (arg->kind != ExprKind::kName) {
          syntax_error(eq.span, "expected a parameter name before '=' in the keyword argument");
        }
        for (const Keyword& k : call->keywords) {
          if (k.name == arg->name) error(arg->span, "keyword argument repeated: " + arg->name);
        }
        Keyword kw{arg->name, parse_test(), arg->span};
        kw.span = span_from(arg->span);
        call->keywords.push_back(std::move(kw));
      } else {
        if (!call->keywords.empty()) syntax_error(arg->span, "positional argument follows keyword argument");
        call->elts.push_back(std::move(arg));
      }
    }
    if (!accept_op(",")) break;
  }
  expect_op(")", "expected ',' or ')' in the argument list");
  call->span = span_from(call->span);
  return call;
}

ExprPtr Parser::parse_subscript(ExprPtr value) {
  auto sub = make_expr(ExprKind::kSubscript, value->span);
  sub->a = std::move(value);
  take();  // '['
  ExprPtr first = parse_subscript_item();
  if (at_op(",")) {
    auto tuple = make_expr(ExprKind::kTuple, first->span);
    tuple->elts.push_back(std::move(first));
    while (accept_op(",") && !at_op("]") && !at(TokenKind::kEnd)) tuple->elts.push_back(parse_subscript_item());
    tuple->span = span_from(tuple->span);
    first = std::move(tuple);
  }
  sub->b = std::move(first);
  expect_op("]", "expected ',' or ']' in the subscript");
  sub->span = span_from(sub->span);
  return sub;
}

ExprPtr Parser::parse_subscript_item() {
  SourceSpan start = peek().span;
  ExprPtr lower;
  if (!at_op(":")) {
    lower = parse_star_or(&Parser::parse_test);
    if (!at_op(":")) return lower;
    start = lower->span;
  }
  auto slice = make_expr(ExprKind::kSlice, start);
  slice->a = std::move(lower);
  take();  // ':'
  auto bound_follows = [&] { return !at_op(":") && !at_op(",") && !at_op("]") && !at(TokenKind::kEnd); };
  if (bound_follows()) slice->b = parse_test();
  if (accept_op(":") && bound_follows()) slice->c = parse_test();
  slice->span = span_from(start);
  return slice;
}

ExprPtr Parser::parse_atom() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::kName: {
      Token tok = take();
      auto e = make_expr(ExprKind::kName, tok.span);
      e->name = tok.text;
      return e;
    }
    case TokenKind::kInt: {
      Token tok = take();
      auto e = make_expr(ExprKind::kInt, tok.span);
      e->int_value = tok.int_value;
      return e;
    }
    case TokenKind::kFloat: {
      Token tok = take();
      auto e = make_expr(ExprKind::kFloat, tok.span);
      e->float_value = tok.float_value;
      return e;
    }
    case TokenKind::kString: return parse_strings();
    case TokenKind::kKeyword:
      if (t.text == "True" || t.text == "False") {
        Token tok = take();
        auto e = make_expr(ExprKind::kBool, tok.span);
        e->bool_value = tok.text == "True";
        return e;
      }
      if (t.text == "None") return make_expr(ExprKind::kNone, take().span);
      if (t.text == "lambda") return parse_lambda();
      if (t.text == "yield") return parse_unsupported_keyword_expr();
      break;
    case TokenKind::kOp:
      if (t.text == "...") return make_expr(ExprKind::kEllipsis, take().span);
      if (t.text == "(") return parse_paren();
      if (t.text == "[") return parse_list();
      if (t.text == "{") return parse_brace();
      break;
    default: break;
  }
  syntax_error(t.span, "expected an expression, found " + describe_token(t));
  return error_expr(prev_);
}

ExprPtr Parser::parse_strings() {
  Token first = take();
  auto e = make_expr(ExprKind::kString, first.span);
  e->str_value = first.str_value;
  while (at(TokenKind::kString)) e->str_value += take().str_value;  // "a" "b" is "ab"
  e->span = span_from(first.span);
  return e;
}

ExprPtr Parser::parse_unsupported_keyword_expr() {
  Token kw = take();
  if (kw.text == "yield") {
    error(kw.span, "'yield' expressions are not supported in staged programs");
    accept_keyword("from");
    if (starts_expression()) parse_test_list();
  }
  return error_expr(span_from(kw.span));
}

// lambda [param [= test] (',' param [= test])*]: test -- a FunctionDef named
// "<lambda>" whose body returns the expression.
ExprPtr Parser::parse_lambda() {
  Token kw = take();
  auto e = make_expr(ExprKind::kLambda, kw.span);
  auto def = std::make_shared<FunctionDef>();
  def->name = "<lambda>";
  def->name_span = kw.span;
  bool seen_default = false;
  ParamKind next = ParamKind::kPositional;
  while (!at_op(":") && !at(TokenKind::kEnd) && !at(TokenKind::kNewline)) {
    if (parse_star_param(*def, next, /*in_lambda=*/true)) {
      if (!accept_op(",")) break;
      continue;
    }
    Param p;
    p.span = peek().span;
    p.kind = next;
    p.name = expect_name("expected a parameter name in the lambda expression");
    for (const Param& other : def->params)
      if (other.name == p.name) error(p.span, "duplicate parameter '" + p.name + "' in the lambda expression");
    if (accept_op("=")) {
      p.default_value = parse_test();
      seen_default = true;
    } else if (seen_default && p.kind == ParamKind::kPositional) {
      error(p.span, "parameter '" + p.name + "' without a default follows a parameter with a default");
    }
    def->params.push_back(std::move(p));
    if (!accept_op(",")) break;
  }
  expect_op(":", "expected ':' in the lambda expression");
  ExprPtr body = parse_test();
  auto ret = std::make_unique<Stmt>(StmtKind::kReturn, body->span);
  ret->value = std::move(body);
  def->body.push_back(std::move(ret));
  e->span = span_from(kw.span);
  e->lambda_def = std::move(def);
  return e;
}

ExprPtr Parser::parse_paren() {
  Token open = take();
  if (accept_op(")")) return make_expr(ExprKind::kTuple, span_from(open.span));
  ExprPtr first = parse_star_or(&Parser::parse_test);
  if (at_keyword("for")) {
    auto gen = make_expr(ExprKind::kGenExp, open.span);
    gen->a = std::move(first);
    parse_comprehension(gen->generators);
    expect_op(")", "expected ')' after the generator expression");
    gen->span = span_from(open.span);
    return gen;
  }
  if (!at_op(",")) {
    expect_op(")", "expected ')'");
    return first;
  }
  auto tuple = make_expr(ExprKind::kTuple, open.span);
  tuple->elts.push_back(std::move(first));
  while (accept_op(",") && !at_op(")") && !at(TokenKind::kEnd)) {
    tuple->elts.push_back(parse_star_or(&Parser::parse_test));
  }
  expect_op(")", "expected ',' or ')' in the tuple");
  tuple->span = span_from(open.span);
  return tuple;
}

ExprPtr Parser::parse_list() {
  Token open = take();
  auto list = make_expr(ExprKind::kList, open.span);
  if (accept_op("]")) {
    list->span = span_from(open.span);
    return list;
  }
  ExprPtr first = parse_star_or(&Parser::parse_test);
  if (at_keyword("for")) {
    auto comp = make_expr(ExprKind::kListComp, open.span);
    comp->a = std::move(first);
    parse_comprehension(comp->generators);
    expect_op("]", "expected ']' after the list comprehension");
    comp->span = span_from(open.span);
    return comp;
  }
  list->elts.push_back(std::move(first));
  while (accept_op(",") && !at_op("]") && !at(TokenKind::kEnd)) {
    list->elts.push_back(parse_star_or(&Parser::parse_test));
  }
  expect_op("]", "expected ',' or ']' in the list");
  list->span = span_from(open.span);
  return list;
}

ExprPtr Parser::parse_brace() {
  Token open = take();
  auto dict = make_expr(ExprKind::kDict, open.span);
  if (accept_op("}")) {
    dict->span = span_from(open.span);
    return dict;
  }
  bool is_set = false;
  bool first = true;
  while (!at_op("}") && !at(TokenKind::kEnd)) {
    if (at_op("**")) {
      error(take().span, "dict unpacking ('**') is not supported in staged programs");
      parse_or_expr();
    } else {
      ExprPtr key = parse_star_or(&Parser::parse_test);
      if (first) is_set = !at_op(":");
      if (!is_set) {
        expect_op(":", "expected ':' after the dict key");
        dict->keys.push_back(std::move(key));
        dict->elts.push_back(parse_test());
      }
      if (first && !is_set && at_keyword("for")) {
        auto comp = make_expr(ExprKind::kDictComp, open.span);
        comp->a = std::move(dict->keys.back());
        comp->b = std::move(dict->elts.back());
        parse_comprehension(comp->generators);
        expect_op("}", "expected '}' after the dict comprehension");
        comp->span = span_from(open.span);
        return comp;
      }
      if (first && at_keyword("for")) {
        error(span_from(open.span), "set comprehensions are not supported in staged programs");
        std::vector<Comprehension> unused;
        parse_comprehension(unused);
      } else if (first && is_set) {
        error(open.span, "set literals are not supported in staged programs");
      }
    }
    first = false;
    if (!accept_op(",")) break;
  }
  expect_op("}", is_set ? "expected ',' or '}' in the set" : "expected ',' or '}' in the dict");
  dict->span = span_from(open.span);
  return is_set ? error_expr(dict->span) : std::move(dict);
}

void Parser::parse_comprehension(std::vector<Comprehension>& generators) {
  while (at_keyword("for")) {
    take();
    Comprehension gen;
    gen.target = parse_target_list();
    check_target(*gen.target, /*allow_unpacking=*/true);
    expect_keyword("in", "expected 'in' in the comprehension");
    gen.iter = parse_or_test();
    while (accept_keyword("if")) gen.ifs.push_back(parse_or_test());
    generators.push_back(std::move(gen));
  }
}

}  // namespace sg::compiler
