// Variable scopes. A function call runs in a new scope whose parent is the scope
// its `def` ran in (closures read enclosing variables; no `nonlocal`), ending at
// the module scope. Assignment always binds in the innermost scope.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "staging/value.h"

namespace sg::compiler::staging {

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}

  const Value* lookup(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent_.get()) {
      auto it = s->vars_.find(name);
      if (it != s->vars_.end()) return &it->second;
    }
    return nullptr;
  }
  const Value* find_local(const std::string& name) const {
    auto it = vars_.find(name);
    return it == vars_.end() ? nullptr : &it->second;
  }
  void set(const std::string& name, Value v) { vars_[name] = std::move(v); }
  void erase(const std::string& name) { vars_.erase(name); }

  // Ordered by name so that everything derived from a scope (branch outputs) is
  // deterministic.
  const std::map<std::string, Value>& vars() const { return vars_; }
  std::map<std::string, Value>& vars() { return vars_; }
  const std::shared_ptr<Scope>& parent() const { return parent_; }

 private:
  std::shared_ptr<Scope> parent_;
  std::map<std::string, Value> vars_;
};

}  // namespace sg::compiler::staging
