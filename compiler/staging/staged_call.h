// Graph functions called through Call nodes (SPEC.md §6): functions on a cycle
// of the call graph and @sg.function helpers, called with any staged argument.
// Each specialisation (the function's static argument values, and its staged
// arguments' dtypes and shapes) is staged once into a graph function of its own.
//
// Staging a specialisation may need its own result type before it is known (a
// recursive call staged before any return). The type comes from a return
// annotation, or is inferred from the paths that return without recursing:
// a first pass, the probe, stages the body with every recursive call of the
// function leaving its control path pending (PendingResult); a staged branch
// that is pending gives way to the other one, so the probe returns the join of
// the other paths' results. That is the hypothesis: the body is staged again
// with the recursive calls' results assumed to be of that type, diagnostics
// held back, until the result it returns fits the assumption (a fixpoint,
// widening the dims that differ); then it is staged once more for real. When
// every path of the probe is pending the compiler asks for an annotation.
// A pass that is abandoned (the probe, a wrong assumption, a recursive call
// whose shapes widen the signature) is rolled back: the functions, constants
// and specialisations it created are dropped.
#pragma once

#include <memory>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "staging/call_graph.h"
#include "staging/calls.h"
#include "staging/stager.h"

namespace sg::compiler::staging {

// The type of what a graph function returns: None, a tensor, or a tuple of them.
struct ResultSig {
  enum class Kind : uint8_t { kNone, kTensor, kTuple };
  Kind kind = Kind::kNone;
  ir::Type type;                // kTensor
  std::vector<ResultSig> items; // kTuple
  // kTensor from a Python number: beside a tensor its dtype would give way
  // (SPEC §3), so an int or bool one may stand for a float.
  bool weak = false;
};

struct Specialisation {
  const FunctionDef* def = nullptr;
  std::string family;              // def, closure, static values, staged dtypes and ranks
  size_t family_hash = 0;          // compared first: families share long prefixes
  int32_t fn = -1;                 // the IR function (of the latest pass)
  std::vector<ir::Type> param_types;  // staged argument leaves, then captured values
  std::set<int32_t> widened;       // symbols introduced by widening
  bool in_progress = false;
  std::optional<ResultSig> assumed;  // what recursive calls return while staging
  bool assumed_used = false;
  ResultSig result;                // once staged
  // The outermost position on GraphCalls::active of a specialisation in
  // progress that the latest pass relied on (its assumed result, a branch left
  // pending on it, or a specialisation that relied on it); kNone: none, so
  // what the pass staged holds whatever they turn out to return.
  static constexpr size_t kNone = ~size_t(0);
  size_t relies_on = kNone;
};

// A recursive call's staged shapes differ from its specialisation: the pass
// restarts with the widened signature.
struct WidenRestart { size_t spec; };

// The arguments of one call, flattened: a family key for the static part, and
// the staged leaves (arguments in order, then values captured from enclosing
// functions) with their names.
struct CallArgs {
  std::string family;
  std::vector<Staged> leaves;
  std::vector<std::string> leaf_names;
  std::vector<Staged> captures;  // the captured leaves (also at the end of `leaves`)
};

struct GraphCalls {
  explicit GraphCalls(const Module& module) : graph(module) {}

  CallGraph graph;
  std::vector<Specialisation> specs;
  // The specialisations being staged, outermost first.
  std::vector<size_t> active;
  // What a specialisation that relied on none in progress returned, by family
  // and the argument types of the call that made it. A pass rolled back drops
  // the specialisations made inside it; one of these, called again, is staged in
  // one pass with that result assumed, instead of being inferred again (probe
  // and passes, each staging the specialisations it calls anew: exponential in
  // a chain of them, each of whose probes is rolled back).
  struct Settled {
    std::vector<ir::Type> call_types, param_types;
    std::set<int32_t> widened;
    ResultSig result;
  };
  std::map<std::string, std::vector<Settled>> settled;

  // ---- staged_call.cc ----------------------------------------------------------
  Value call(Stager& s, const std::shared_ptr<FunctionV>& f, const Scope& bound, SourceSpan span);

 private:
  // What a pass adds that its rollback drops: functions, constants and
  // specialisations, the warnings and compile-time output it recorded, and the
  // branches it left pending (Branches::pending).
  struct Snapshot {
    size_t functions = 0, constants = 0, specs = 0, diagnostics = 0, output = 0;
    int64_t pending_branches = 0;
    std::set<int32_t> zero_trip_warned;
  };
  Snapshot snapshot(Stager& s) const;
  // `keep_diagnostics`: a pass that failed with diagnostics on keeps its error.
  void rollback(Stager& s, const Snapshot& snap, bool keep_diagnostics = false);
  CallArgs flatten(Stager& s, const std::shared_ptr<FunctionV>& f, const Scope& bound, SourceSpan span);
  std::optional<size_t> find(const std::string& family, const std::vector<ir::Type>& types) const;
  void stage(Stager& s, size_t idx, const std::shared_ptr<FunctionV>& f, const Scope& bound, const CallArgs& args,
             SourceSpan span, const Settled* known);
  // The specialisations being staged above position `pos` of `active` rely on
  // the one there.
  void rely_on(size_t pos);
  ResultSig pass(Stager& s, size_t idx, const std::shared_ptr<FunctionV>& f, const Scope& bound,
                 const CallArgs& args, SourceSpan span);
  Value emit_call(Stager& s, size_t idx, const CallArgs& args, const ResultSig& result, SourceSpan span);

  // ---- staged_call_types.cc -----------------------------------------------------
 public:
  // The return annotation of `def` (evaluated in `closure`), if it has one.
  std::optional<ResultSig> annotation(Stager& s, const FunctionDef& def, const std::shared_ptr<Scope>& closure);
  // The result a function body returned, materialized as the results of the
  // current graph function.
  ResultSig materialize_result(Stager& s, const Value& v, const FunctionDef& def);
  // The assumption made of a result `r` for the recursive calls: static dims
  // and dims over the specialisation's parameter symbols (`params`; a Call
  // node puts the call's argument dims in their place) are kept, every other
  // dim becomes a fresh symbol of its own, so it ties nothing.
  ResultSig hypothesis(Stager& s, const ResultSig& r, const std::set<int32_t>& params,
                       const std::string& hint) const;
  // The same structure and dtypes, and `r`'s dims equal `g`'s where `g`'s are
  // static (an annotation's names tie nothing).
  static bool fits(const ResultSig& r, const ResultSig& g);
  // `r` bears out the assumption `h`: the same structure and dtypes, and equal
  // dims wherever `h` keeps one (static, or over `params`).
  static bool bears_out(const ResultSig& r, const ResultSig& h, const std::set<int32_t>& params);
  // Weak int and bool results become f32; false when there are none.
  static bool promote_weak(ResultSig& r);
  // Dims that differ become fresh symbols; null when structure, dtype or rank differ.
  std::optional<ResultSig> join(Stager& s, const ResultSig& a, const ResultSig& b, const std::string& hint) const;
  // The symbols that are whole dims of the parameters of specialisation `idx`.
  std::set<int32_t> parameter_symbols(size_t idx) const;
  std::string format(const Stager& s, const ResultSig& r) const;
};

}  // namespace sg::compiler::staging
