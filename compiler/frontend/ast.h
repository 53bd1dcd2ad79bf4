// The AST of the Python subset graph-compile accepts (SPEC.md §1, §4).
// Every node keeps its source span. One struct per category (Expr, Stmt) with a
// kind tag and the fields that kind uses; the parser (parser.h) documents which.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diagnostics.h"

namespace sg::compiler {

struct Expr;
struct Stmt;
struct FunctionDef;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind : uint8_t {
  kName,        // name
  kInt,         // int_value (Python int; literals beyond int64 are a parse error)
  kFloat,       // float_value
  kString,      // str_value (adjacent literals concatenated)
  kBool,        // bool_value
  kNone,
  kEllipsis,
  kTuple,       // elts
  kList,        // elts
  kDict,        // keys, elts (values), same length
  kBinOp,       // bin_op, a (left), b (right), op_spans (the operator)
  kUnaryOp,     // unary_op, a
  kBoolOp,      // bool_op, elts (two or more values, left to right)
  kCompare,     // a (left), cmp_ops, elts (comparators): a op0 elts[0] op1 elts[1] ...;
                //   op_spans: one per operator (`is not`, `not in`: both words)
  kCall,        // a (callee), elts (positional args), keywords
  kAttribute,   // a (value), name (attribute)
  kSubscript,   // a (value), b (index: a kTuple when there are commas)
  kSlice,       // a (lower), b (upper), c (step); any may be null; only inside a subscript
  kIfExp,       // a (test), b (body), c (orelse):  b if a else c
  kListComp,    // a (element), generators
  kDictComp,    // a (key), b (value), generators
  kGenExp,      // a (element), generators: `(x for x in xs)`, evaluated as a list would be
  kStarred,     // a: `*x` in a call's arguments or in a tuple or list display
  kLambda,      // lambda_def (params; body: one return statement of the expression)
};

enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow, kMatMul, kBitAnd, kBitOr, kBitXor, kLShift, kRShift };
enum class UnaryOp : uint8_t { kNeg, kPos, kNot, kInvert };
enum class BoolOp : uint8_t { kAnd, kOr };
enum class CmpOp : uint8_t { kLt, kLe, kGt, kGe, kEq, kNe, kIs, kIsNot, kIn, kNotIn };

const char* bin_op_symbol(BinOp op);    // "+", "@", ...
const char* cmp_op_symbol(CmpOp op);    // "<", "is not", ...

struct Keyword {
  std::string name;
  ExprPtr value;
  SourceSpan span;
};

struct Comprehension {
  ExprPtr target;
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
};

struct Expr {
  ExprKind kind;
  SourceSpan span;
  std::string name;
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string str_value;
  BinOp bin_op = BinOp::kAdd;
  UnaryOp unary_op = UnaryOp::kNeg;
  BoolOp bool_op = BoolOp::kAnd;
  std::vector<CmpOp> cmp_ops;
  // Operator tokens, where diagnostics of the operation point (SPEC.md §8).
  std::vector<SourceSpan> op_spans;
  ExprPtr a, b, c;
  std::vector<ExprPtr> elts;
  std::vector<ExprPtr> keys;
  std::vector<Keyword> keywords;  // kCall; an empty name is `**mapping`
  std::vector<Comprehension> generators;
  std::shared_ptr<FunctionDef> lambda_def;  // kLambda
  // The node's nesting height (a leaf is 1), which the parser bounds; 0 where the
  // parser has not needed it yet.
  uint32_t height = 0;

  Expr(ExprKind k, SourceSpan s) : kind(k), span(s) {}
};

enum class StmtKind : uint8_t {
  kExpr,        // value
  kAssign,      // targets (a = b = value: several), value
  kAugAssign,   // target, aug_op, op_span (the operator, "+="), value
  kAnnAssign,   // target, annotation, value (may be null)
  kIf,          // test, body, orelse (elif is a nested kIf in orelse)
  kWhile,       // test, body
  kFor,         // target, iter, body
  kBreak,
  kContinue,
  kReturn,      // value (may be null)
  kPass,
  kAssert,      // test, msg (may be null)
  kFunctionDef, // func
  kImport,      // imports: module names with aliases ("import stagegraph as sg")
  kImportFrom,  // module, imports (names with aliases)
  kClassDef,    // cls
  kRaise,       // value (the exception; may be null: a bare `raise`)
  kTry,         // body, handlers, orelse, finalbody
  kDel,         // targets
  kGlobal,      // names
  kNonlocal,    // names
};

enum class ParamKind : uint8_t {
  kPositional,   // positional or keyword
  kVarPositional,  // *args: a tuple of the positional arguments left over
  kKeywordOnly,  // after *args or a bare *
  kVarKeyword,   // **kwargs: a dict of the keyword arguments left over
};

struct Param {
  std::string name;
  ParamKind kind = ParamKind::kPositional;
  SourceSpan span;
  ExprPtr annotation;  // may be null
  ExprPtr default_value;  // may be null
};

struct FunctionDef {
  std::string name;
  SourceSpan name_span;
  std::vector<ExprPtr> decorators;
  std::vector<Param> params;
  ExprPtr returns;  // may be null
  std::vector<StmtPtr> body;
  std::string docstring;
};

struct ClassDef {
  std::string name;
  SourceSpan name_span;
  std::vector<ExprPtr> decorators;
  std::vector<ExprPtr> bases;
  std::vector<StmtPtr> body;
  std::string docstring;
};

struct ExceptHandler {
  SourceSpan span;  // the `except ...:` line
  ExprPtr type;     // may be null: a bare `except:`
  std::string name; // `as NAME`; empty when none
  std::vector<StmtPtr> body;
};

struct ImportName {
  std::string name;   // dotted module name for kImport, a name for kImportFrom
  std::string alias;  // empty when none
  SourceSpan span;
};

struct Stmt {
  StmtKind kind;
  SourceSpan span;
  std::vector<ExprPtr> targets;
  ExprPtr target;
  ExprPtr value;
  ExprPtr test;
  ExprPtr annotation;
  ExprPtr msg;
  ExprPtr iter;
  BinOp aug_op = BinOp::kAdd;
  SourceSpan op_span;  // kAugAssign
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
  std::unique_ptr<FunctionDef> func;
  std::string module;
  std::vector<ImportName> imports;
  std::unique_ptr<ClassDef> cls;            // kClassDef
  std::vector<ExceptHandler> handlers;      // kTry
  std::vector<StmtPtr> finalbody;           // kTry
  std::vector<std::string> names;           // kGlobal, kNonlocal

  Stmt(StmtKind k, SourceSpan s) : kind(k), span(s) {}
};

struct Module {
  uint32_t file = 0;  // SourceManager id
  std::vector<StmtPtr> body;
};

}  // namespace sg::compiler
