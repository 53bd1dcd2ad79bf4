// Staged loops (SPEC §5), shared by the loop forms: `while` with a staged
// test, `for` over a range with a staged bound or over sg.range, and `for`
// over a tensor whose first dim is symbolic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "staging/control_state.h"

namespace sg::compiler::staging {

// The Loops concern of the stager: what it must know of values across the loops
// it stages. Each staged loop has a token; a staged value that stands for a Python
// number (WeakOrigin, stager.h) carries its origin, so that a loop that carried a
// number in the wrong dtype is staged again (WeakRetype) and a Python int meets a
// tensor as eager mode's would (staged_loop.cc).
class Loops {
 public:
  explicit Loops(Stager& s) : s_(s) {}
  Loops(const Loops&) = delete;
  Loops& operator=(const Loops&) = delete;

  // The loop statements (staged_loop_forms.cc): unrolled at compile time where the
  // test or the iterable is static, else a While node (run_staged_loop).
  Flow exec_while(const Stmt& s);
  Flow exec_for(const Stmt& s);

  int64_t new_token() { return ++tokens_; }

  const WeakOrigin* weak_origin(const Value& v) const;
  void mark_weak(const Value& v, const WeakOrigin& origin);
  // Throws WeakRetype when `v` stands for a carried Python number that can take
  // `dtype` and has not been given one yet (provenance.cc: it unwinds like fail).
  void retype_weak(const Value& v, DType dtype);
  // Marks a staged value that stands for a Python int (a counter, a dim).
  void mark_weak_int(const Value& v);

  // Rollbacks: the marks on values of functions from `functions` on, or on values
  // from `values` on of function `fn`, are dropped.
  void forget_functions(size_t functions);
  void forget_values(int32_t fn, size_t values);

 private:
  // `for x in range(...)` / `sg.range(...)`: staged when a bound is staged (or by
  // sg.range), else the static range to unroll, left in `iterable`.
  std::optional<Flow> exec_for_range(const Stmt& s, bool sg_range, const std::set<std::string>& targets,
                                     Value& iterable);
  // A staged loop over tensors whose first dim is known only at run time (zipped, or
  // enumerated from `index_base`): a counter indexes each.
  Flow exec_for_over_tensors(const Stmt& s, const Value& iterable, const std::vector<Value>& zipped,
                             std::optional<int64_t> index_base,
                             const std::vector<std::pair<size_t, Value>>& zipped_numbers,
                             const std::set<std::string>& targets);

  Stager& s_;
  std::map<std::pair<int32_t, int32_t>, WeakOrigin> weak_;
  int64_t tokens_ = 0;
};

struct StagedLoopSpec {
  const Stmt& stmt;
  const char* what;  // "while" or "for"
  // In the cond function, with the carried variables bound: the test.
  std::function<Value()> test;
  // In the body function, before the body: binds the for target, steps the counter.
  std::function<void()> prologue;
  // Hidden carried variables (a for loop's counter) and their initial values.
  std::vector<std::pair<std::string, Value>> hidden;
  // Names the for target binds: not readable after the loop.
  std::set<std::string> targets;
  // False where the loop provably runs at least once (static bounds, a dim
  // such as N+1): then nothing it grows can be left empty.
  bool may_run_zero_times = true;
};

// Whether a trip count known as a dim is at least 1 for every binding
// (symbolic dims are sizes, never negative).
bool at_least_one(const ir::Dim& trips);

// Emits the While node; the scope afterwards holds the carried values.
Flow run_staged_loop(Stager& st, const StagedLoopSpec& spec);

// A zero of `type` in the current function, never read (an unset value): a stand-in
// on a path where a value is never read, or the initial value of a variable first
// assigned inside a loop. A symbolic dim takes its size from a value that has it in
// the current function or an enclosing one (an entry's dim), so that what records
// values per iteration (a gradient's tape) sees one shape; one it cannot find is 0.
Value unset_tensor_of_type(Stager& st, const ir::Type& type, SourceSpan span);

// An empty tensor list of `type` ([D, element dims...]) in the current function.
Value empty_list_tensor(Stager& st, const ir::Type& type, const std::string& name, SourceSpan span,
                        const std::set<int32_t>& open_dims = {});
// `list.append(v)`: the list with v added, as a new tensor list value.
Value tensor_list_append(Stager& st, const TensorListV& list, const std::string& name, const Value& v,
                         SourceSpan span);

}  // namespace sg::compiler::staging
