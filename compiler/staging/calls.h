// The Calls concern of the stager: calls through Call nodes (SPEC §6). A call with
// a staged argument of a function on a cycle of the call graph, or of an
// @sg.function, stages a specialisation of it as a graph function of its own
// (GraphCalls, staged_call.h, made on first use); the passes over it that may be
// abandoned are speculative, the first of them a probe for the result type. The
// names of entry and specialisation functions are kept here (staged_call.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "staging/stager.h"

namespace sg::compiler::staging {

class Calls {
 public:
  Calls(Stager& s, const Module& ast);
  ~Calls();
  Calls(const Calls&) = delete;
  Calls& operator=(const Calls&) = delete;

  // A call with any staged argument of a function on a cycle of the call graph,
  // or of an @sg.function (SPEC §6). `bound` holds the bound parameters.
  bool wants_graph_function(const FunctionV& f, const Scope& bound);
  Value call_graph_function(const std::shared_ptr<FunctionV>& f, const Scope& bound, SourceSpan span);
  // Inside a staging pass whose assumptions may prove wrong: errors are held
  // back; warnings and compile-time output are recorded, and dropped with the
  // pass if it is rolled back (staged_call.h).
  bool speculative() const { return speculative_ > 0; }
  // Inside a probe for a result type: a recursive call of unknown result type
  // throws PendingResult, which staged_branches turns into a pending branch.
  bool probing() const { return probing_ > 0; }

  // The specialisations made so far; a rollback drops those from `specs` on.
  size_t specialisations() const;
  void drop_specialisations(size_t specs);

  // The name of entry function `fn`: its def's.
  void name_entry(int32_t fn, const std::string& name);
  // The name of specialisation function `fn` of def `base`: base, or base.1,
  // base.2, ..., the first not taken by a live entry or specialisation.
  std::string name_specialisation(int32_t fn, const std::string& base);
  // Functions from `functions` on are dropped: their names are free again.
  void forget_names(size_t functions);

 private:
  friend struct GraphCalls;  // counts its speculative passes and probes
  GraphCalls& graph_calls();

  Stager& s_;
  const Module& ast_;
  std::unique_ptr<GraphCalls> graph_calls_;
  int speculative_ = 0;
  int probing_ = 0;
  // The names entry and specialisation functions hold, kept as functions are
  // made and forgotten, so that a new specialisation finds its suffix without
  // scanning every function (that was quadratic in a recursion through
  // thousands of static arguments).
  struct CalledName {
    std::string name, base;
    int64_t suffix;
  };
  std::set<std::string> taken_names_;
  std::map<int32_t, CalledName> name_of_function_;
  std::map<std::string, int64_t> first_free_suffix_;  // every suffix below it is taken
};

}  // namespace sg::compiler::staging
