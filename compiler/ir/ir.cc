// Symbol table and type formatting for the IR. The verifier lives in
// ir_verify.cc and the text printer in ir_print.cc.
#include "ir/ir.h"

#include <string>

namespace sg::compiler::ir {

int32_t SymbolTable::intern(const std::string& symbol_name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == symbol_name) return int32_t(i);
  names.push_back(symbol_name);
  return int32_t(names.size() - 1);
}

int32_t SymbolTable::fresh(const std::string& hint) {
  // "N#1" as a hint gives "N#2", not "N#1#1": derived names stay one level deep.
  std::string base = hint.substr(0, hint.find('#'));
  if (base.empty()) base = "D";
  for (int k = 1;; ++k) {
    std::string candidate = base + "#" + std::to_string(k);
    bool taken = false;
    for (const std::string& n : names) {
      if (n == candidate) {
        taken = true;
        break;
      }
    }
    if (!taken) {
      names.push_back(std::move(candidate));
      return int32_t(names.size() - 1);
    }
  }
}

std::string Module::format_dim(const Dim& d) const {
  // Ids out of range only appear in broken modules; the printer must still be
  // able to show them so that verify() messages and dumps stay readable.
  return d.to_string([this](int32_t id) {
    if (id >= 0 && size_t(id) < symbols.names.size()) return symbols.names[size_t(id)];
    return "?" + std::to_string(id);
  });
}

std::string Module::format_shape(const std::vector<Dim>& shape) const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += format_dim(shape[i]);
  }
  return s + "]";
}

std::string Module::format_type(const Type& t) const {
  return std::string(dtype_name(t.dtype)) + format_shape(t.shape);
}

}  // namespace sg::compiler::ir
