// sg.variables: program-level state (SPEC §12), the Variables concern of the
// stager. Every tensor or number in the structures given becomes a module variable
// named by its path ("params.0.w", "step"). In an entry a read gives the value at
// the start of the run (a parameter of the entry bound to the variable); the value
// to store is like a local of the entry, which a staged if joins and a staged loop
// carries under carry_name (staged_if.cc, staged_loop*.cc); what it holds when the
// entry ends becomes results after the outputs (sg_variables.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "staging/stager.h"

namespace sg::compiler::staging {

class ProgramVariables {
 public:
  explicit ProgramVariables(Stager& s) : s_(s) {}
  ProgramVariables(const ProgramVariables&) = delete;
  ProgramVariables& operator=(const ProgramVariables&) = delete;

  // sg.variables(name=structure, ...) at module level.
  Value make(const Args& args);
  // vars.name: the initial values at module level, the values at the start of the
  // run inside an entry.
  Value attribute(const VariablesPtr& vars, const std::string& name, SourceSpan span);
  // vars.name = v inside an entry: v becomes the value to store.
  void assign(const VariablesPtr& vars, const std::string& name, const Value& v, SourceSpan span);

  // The entry `builder` stages from now on; finish_entry lists its variable
  // parameters and adds the assigned values as results after the outputs.
  void begin_entry(FnBuilder& builder);
  void finish_entry(ir::Entry& entry, SourceSpan span);
  // Whether the entry being staged assigned any variable so far.
  bool any_assigned() const { return !current_.empty(); }

  // Per variable the run assigned so far, its value now.
  std::map<int32_t, Value>& current() { return current_; }
  // The value at the start of the run: the entry's parameter bound to the variable.
  Value start(int32_t var, SourceSpan span);
  // The hidden local a staged if or loop joins or carries a variable's value under.
  std::string carry_name(int32_t var) const;
  // A rollback of builder `b` to `values` values: a variable first read since has
  // lost its parameter with the entry's values.
  void forget_params(const FnBuilder* b, size_t values);

  // While staging a function apart to transform it (sg.grad): no assignments there.
  void bar_assignments() { ++assign_barred_; }
  void unbar_assignments() { --assign_barred_; }

 private:
  // Whether the current graph function is the entry or a branch or loop body staged
  // inside it (not a staged Call's callee, which has no way back to the entry).
  bool in_entry_run() const;

  Stager& s_;
  int assign_barred_ = 0;
  FnBuilder* entry_builder_ = nullptr;          // the entry being staged, for variable reads
  std::map<int32_t, int32_t> params_;           // variable -> its parameter in the entry
  std::map<int32_t, Value> current_;            // variable -> its value now (assigned in this run)
};

}  // namespace sg::compiler::staging
