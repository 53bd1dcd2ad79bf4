// Staged loops (SPEC §5), shared by the loop forms: `while` with a staged
// test, `for` over a range with a staged bound or over sg.range, and `for`
// over a tensor whose first dim is symbolic.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "staging/control_state.h"

namespace sg::compiler::staging {

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
