#include "frontend_test_util.h"

#include <charconv>
#include <sstream>

#include "frontend/parser.h"

namespace sg::compiler::testing {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string float_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string opt(const ExprPtr& e) { return e ? dump_expr(*e) : "_"; }

std::string list(const char* head, const std::vector<ExprPtr>& elts) {
  std::string out = std::string("(") + head;
  for (const ExprPtr& e : elts) out += " " + dump_expr(*e);
  return out + ")";
}

const char* unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kPos: return "pos";
    case UnaryOp::kNot: return "not";
    case UnaryOp::kInvert: return "~";
  }
  return "?";
}

}  // namespace

std::string param_prefix(ParamKind kind) {
  switch (kind) {
    case ParamKind::kPositional: return "";
    case ParamKind::kVarPositional: return "*";
    case ParamKind::kKeywordOnly: return "kw:";
    case ParamKind::kVarKeyword: return "**";
  }
  return "?";
}

std::string dump_expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kName: return e.name;
    case ExprKind::kInt: return std::to_string(e.int_value);
    case ExprKind::kFloat: return float_text(e.float_value);
    case ExprKind::kString: return quote(e.str_value);
    case ExprKind::kBool: return e.bool_value ? "True" : "False";
    case ExprKind::kNone: return "None";
    case ExprKind::kEllipsis: return "...";
    case ExprKind::kTuple: return list("tuple", e.elts);
    case ExprKind::kList: return list("list", e.elts);
    case ExprKind::kDict: {
      std::string out = "(dict";
      for (size_t i = 0; i < e.keys.size(); ++i) out += " (" + dump_expr(*e.keys[i]) + " " + dump_expr(*e.elts[i]) + ")";
      return out + ")";
    }
    case ExprKind::kBinOp: return std::string("(") + bin_op_symbol(e.bin_op) + " " + dump_expr(*e.a) + " " + dump_expr(*e.b) + ")";
    case ExprKind::kUnaryOp: return std::string("(") + unary_name(e.unary_op) + " " + dump_expr(*e.a) + ")";
    case ExprKind::kBoolOp: return list(e.bool_op == BoolOp::kAnd ? "and" : "or", e.elts);
    case ExprKind::kCompare: {
      if (e.cmp_ops.size() == 1) {
        return std::string("(") + cmp_op_symbol(e.cmp_ops[0]) + " " + dump_expr(*e.a) + " " + dump_expr(*e.elts[0]) + ")";
      }
      std::string out = "(cmp " + dump_expr(*e.a);
      for (size_t i = 0; i < e.cmp_ops.size(); ++i) out += std::string(" ") + cmp_op_symbol(e.cmp_ops[i]) + " " + dump_expr(*e.elts[i]);
      return out + ")";
    }
    case ExprKind::kCall: {
      std::string out = "(call " + dump_expr(*e.a);
      for (const ExprPtr& arg : e.elts) out += " " + dump_expr(*arg);
      for (const Keyword& k : e.keywords)
        out += k.name.empty() ? " (** " + dump_expr(*k.value) + ")" : " (= " + k.name + " " + dump_expr(*k.value) + ")";
      return out + ")";
    }
    case ExprKind::kAttribute: return "(. " + dump_expr(*e.a) + " " + e.name + ")";
    case ExprKind::kSubscript: return "([] " + dump_expr(*e.a) + " " + dump_expr(*e.b) + ")";
    case ExprKind::kSlice: return "(: " + opt(e.a) + " " + opt(e.b) + " " + opt(e.c) + ")";
    case ExprKind::kIfExp: return "(if " + dump_expr(*e.a) + " " + dump_expr(*e.b) + " " + dump_expr(*e.c) + ")";
    case ExprKind::kStarred: return "(* " + dump_expr(*e.a) + ")";
    case ExprKind::kListComp:
    case ExprKind::kGenExp:
    case ExprKind::kDictComp: {
      std::string out = e.kind == ExprKind::kListComp ? "(listcomp " + dump_expr(*e.a)
                        : e.kind == ExprKind::kGenExp ? "(genexp " + dump_expr(*e.a)
                                                      : "(dictcomp " + dump_expr(*e.a) + " " + dump_expr(*e.b);
      for (const Comprehension& g : e.generators) {
        out += " (for " + dump_expr(*g.target) + " " + dump_expr(*g.iter);
        for (const ExprPtr& c : g.ifs) out += " (if " + dump_expr(*c) + ")";
        out += ")";
      }
      return out + ")";
    }
    case ExprKind::kLambda: {
      std::string out = "(lambda (";
      const FunctionDef& f = *e.lambda_def;
      for (size_t i = 0; i < f.params.size(); ++i) {
        out += (i ? " " : "") + param_prefix(f.params[i].kind) + f.params[i].name;
        if (f.params[i].default_value) out += "=" + dump_expr(*f.params[i].default_value);
      }
      return out + ") " + dump_expr(*f.body[0]->value) + ")";
    }
  }
  return "?";
}

std::string dump_body(const std::vector<StmtPtr>& body) {
  std::string out = "[";
  for (size_t i = 0; i < body.size(); ++i) out += (i ? " " : "") + dump_stmt(*body[i]);
  return out + "]";
}

std::string dump_stmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kExpr: return "(expr " + dump_expr(*s.value) + ")";
    case StmtKind::kAssign: {
      std::string out = "(=";
      for (const ExprPtr& t : s.targets) out += " " + dump_expr(*t);
      return out + " " + dump_expr(*s.value) + ")";
    }
    case StmtKind::kAugAssign: return std::string("(") + bin_op_symbol(s.aug_op) + "= " + dump_expr(*s.target) + " " + dump_expr(*s.value) + ")";
    case StmtKind::kAnnAssign: return "(ann " + dump_expr(*s.target) + " " + dump_expr(*s.annotation) + " " + opt(s.value) + ")";
    case StmtKind::kIf: return "(if " + dump_expr(*s.test) + " " + dump_body(s.body) + " " + dump_body(s.orelse) + ")";
    case StmtKind::kWhile: return "(while " + dump_expr(*s.test) + " " + dump_body(s.body) + ")";
    case StmtKind::kFor: return "(for " + dump_expr(*s.target) + " " + dump_expr(*s.iter) + " " + dump_body(s.body) + ")";
    case StmtKind::kBreak: return "break";
    case StmtKind::kContinue: return "continue";
    case StmtKind::kPass: return "pass";
    case StmtKind::kReturn: return s.value ? "(return " + dump_expr(*s.value) + ")" : "return";
    case StmtKind::kAssert: return "(assert " + dump_expr(*s.test) + " " + opt(s.msg) + ")";
    case StmtKind::kFunctionDef: {
      const FunctionDef& f = *s.func;
      std::string out = "(def";
      for (const ExprPtr& d : f.decorators) out += " @" + dump_expr(*d);
      out += " " + f.name + " (";
      for (size_t i = 0; i < f.params.size(); ++i) {
        const Param& p = f.params[i];
        out += (i ? " " : "") + param_prefix(p.kind) + p.name;
        if (p.annotation) out += ":" + dump_expr(*p.annotation);
        if (p.default_value) out += "=" + dump_expr(*p.default_value);
      }
      out += ")";
      if (f.returns) out += " -> " + dump_expr(*f.returns);
      if (!f.docstring.empty()) out += " doc=" + quote(f.docstring);
      return out + " " + dump_body(f.body) + ")";
    }
    case StmtKind::kClassDef: {
      const ClassDef& c = *s.cls;
      std::string out = "(class";
      for (const ExprPtr& d : c.decorators) out += " @" + dump_expr(*d);
      out += " " + c.name + " (";
      for (size_t i = 0; i < c.bases.size(); ++i) out += (i ? " " : "") + dump_expr(*c.bases[i]);
      out += ")";
      if (!c.docstring.empty()) out += " doc=" + quote(c.docstring);
      return out + " " + dump_body(c.body) + ")";
    }
    case StmtKind::kRaise:
      return s.value ? "(raise " + dump_expr(*s.value) + (s.msg ? " from " + dump_expr(*s.msg) : "") + ")" : "raise";
    case StmtKind::kTry: {
      std::string out = "(try " + dump_body(s.body);
      for (const ExceptHandler& h : s.handlers)
        out += " (except " + opt(h.type) + (h.name.empty() ? "" : " as " + h.name) + " " + dump_body(h.body) + ")";
      if (!s.orelse.empty()) out += " (else " + dump_body(s.orelse) + ")";
      if (!s.finalbody.empty()) out += " (finally " + dump_body(s.finalbody) + ")";
      return out + ")";
    }
    case StmtKind::kDel: {
      std::string out = "(del";
      for (const ExprPtr& t : s.targets) out += " " + dump_expr(*t);
      return out + ")";
    }
    case StmtKind::kGlobal:
    case StmtKind::kNonlocal: {
      std::string out = s.kind == StmtKind::kGlobal ? "(global" : "(nonlocal";
      for (const std::string& n : s.names) out += " " + n;
      return out + ")";
    }
    case StmtKind::kImport:
    case StmtKind::kImportFrom: {
      std::string out = s.kind == StmtKind::kImport ? "(import" : "(from " + s.module + " import";
      for (const ImportName& n : s.imports) out += " " + n.name + (n.alias.empty() ? "" : " as " + n.alias);
      return out + ")";
    }
  }
  return "?";
}

ParseResult parse_source(const std::string& text, const std::string& path) {
  SourceManager sources;
  uint32_t file = sources.add(path, text);
  DiagnosticEngine diags(sources);
  ParseResult result;
  result.module = parse_module(sources, file, diags);
  std::ostringstream os;
  diags.print_text(os);
  result.errors = os.str();
  for (const Diagnostic& d : diags.diagnostics()) {
    result.locations += std::to_string(d.span.line) + ":" + std::to_string(d.span.col) + ": " + d.message + "\n";
  }
  return result;
}

std::string parse_dump(const std::string& text) {
  ParseResult r = parse_source(text);
  if (!r.module) return "ERRORS\n" + r.locations;
  std::string out;
  for (const StmtPtr& s : r.module->body) out += dump_stmt(*s) + "\n";
  return out;
}

std::string expr_dump(const std::string& text) {
  // After a `pass`, so that a lone string is not taken for the module docstring.
  ParseResult r = parse_source("pass\n" + text + "\n");
  if (!r.module) return "ERRORS " + r.locations;
  if (r.module->body.size() != 2 || r.module->body[1]->kind != StmtKind::kExpr) return "not one expression";
  return dump_expr(*r.module->body[1]->value);
}

}  // namespace sg::compiler::testing
