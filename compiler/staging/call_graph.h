// The call graph of a module's functions (SPEC.md §6), from the AST: an edge
// f -> g for every call `g(...)` in f's body whose name resolves lexically to
// the def of g (a def nested in f or in an enclosing function, or a top-level
// def). Functions on a cycle (self or mutual recursion) are compiled as graph
// functions when called with staged arguments.
//
// A method's call `self.m(...)` resolves to method m of the same class.
// Resolution is by name only: a local variable that shadows a function's name
// still counts as a call of it, which can only make a function a graph
// function where it could have been inlined, never the reverse.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontend/ast.h"

namespace sg::compiler::staging {

class CallGraph {
 public:
  explicit CallGraph(const Module& module);

  // True when `def` can reach itself through calls.
  bool on_cycle(const FunctionDef* def) const { return on_cycle_.count(def) > 0; }
  // Every name read anywhere in `def` and in the functions it can reach
  // (closure captures of a graph function are looked up among these).
  const std::set<std::string>& names_reached(const FunctionDef* def);

 private:
  struct Node {
    std::set<std::string> names;             // names read in the body (nested defs included)
    std::vector<const FunctionDef*> callees;
  };
  void visit_def(const FunctionDef& def, std::map<std::string, const FunctionDef*> visible);
  void find_cycles();

  std::map<const FunctionDef*, Node> nodes_;
  std::vector<const FunctionDef*> order_;  // definition order, for determinism
  std::set<const FunctionDef*> on_cycle_;
  std::map<const FunctionDef*, std::set<std::string>> reached_;
  // The methods of the class being visited: `self.m(...)` calls method m.
  const std::map<std::string, const FunctionDef*>* methods_ = nullptr;
};

}  // namespace sg::compiler::staging
