// The Branches concern of the stager: a staged `if` and the expressions that
// branch (`and`, `or`, `x if c else y` on staged values) become If nodes whose
// branch functions join the variables they rebind (staged_if.cc, staged_bool.cc;
// BranchStaging in staged_if_internal.h stages one If). While a probe infers a
// recursive function's result type, a branch that meets the recursive call is
// left pending (staged_call.h); the count of pending branches says whether a pass
// reached one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "staging/stager.h"

namespace sg::compiler::staging {

class Branches {
 public:
  explicit Branches(Stager& s) : s_(s) {}
  Branches(const Branches&) = delete;
  Branches& operator=(const Branches&) = delete;

  Flow exec_staged_if(const Stmt& s, const Value& test);
  // An If node over `test` (a staged scalar): each branch function runs its
  // callback with the scope as it was before; the variables they rebind join.
  void staged_branches(SourceSpan span, const Value& test, const std::string& label,
                       const std::function<void()>& then_fn, const std::function<void()>& else_fn);
  // `and` / `or`, and `x if c else y`: short-circuit where a value is staged.
  Value eval_bool_op(const Expr& e);
  Value eval_if_exp(const Expr& e);

  // Branches a probe left pending so far: a pass that adds none reached no
  // recursive call of unknown result, so what it staged is final. A rollback
  // puts the count back.
  int64_t pending() const { return pending_; }
  void add_pending() { ++pending_; }
  void set_pending(int64_t pending) { pending_ = pending; }

 private:
  Stager& s_;
  int64_t pending_ = 0;
};

}  // namespace sg::compiler::staging
