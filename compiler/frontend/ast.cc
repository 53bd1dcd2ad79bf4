#include "ast.h"

namespace sg::compiler {

const char* bin_op_symbol(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "+";
    case BinOp::kSub: return "-";
    case BinOp::kMul: return "*";
    case BinOp::kDiv: return "/";
    case BinOp::kFloorDiv: return "//";
    case BinOp::kMod: return "%";
    case BinOp::kPow: return "**";
    case BinOp::kMatMul: return "@";
    case BinOp::kBitAnd: return "&";
    case BinOp::kBitOr: return "|";
    case BinOp::kBitXor: return "^";
    case BinOp::kLShift: return "<<";
    case BinOp::kRShift: return ">>";
  }
  return "?";
}

const char* cmp_op_symbol(CmpOp op) {
  switch (op) {
    case CmpOp::kLt: return "<";
    case CmpOp::kLe: return "<=";
    case CmpOp::kGt: return ">";
    case CmpOp::kGe: return ">=";
    case CmpOp::kEq: return "==";
    case CmpOp::kNe: return "!=";
    case CmpOp::kIs: return "is";
    case CmpOp::kIsNot: return "is not";
    case CmpOp::kIn: return "in";
    case CmpOp::kNotIn: return "not in";
  }
  return "?";
}

}  // namespace sg::compiler
