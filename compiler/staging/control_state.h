// The stager's state for staged control flow (SPEC.md §5):
// - the statement stack of the running Python functions, from which liveness
//   after a staged loop is computed (liveness.h);
// - flag variables: break/continue/return inside staged constructs set hidden
//   variables of the scope ("$break", ...) that join like any other variable,
//   so the IR stays structured (If/While only);
// - relaxed dims (sg.relax) and tensor lists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "staging/stager.h"

namespace sg::compiler::staging {

// Hidden scope variables; `$` keeps them apart from Python names.
inline constexpr const char* kBreakFlag = "$break";
inline constexpr const char* kContinueFlag = "$continue";
inline constexpr const char* kReturnFlag = "$return";
inline constexpr const char* kReturnValue = "$retval";

// A variable that may be unbound at run time (first assigned inside a staged loop
// that may run zero times, or in one branch of a staged `if`) has a hidden bool
// beside it: true where it was assigned. Each read checks it at run time, as
// Python raises UnboundLocalError only on the path that did not assign.
inline std::string defined_flag(const std::string& name) { return "$defined." + name; }

// A dict that a variable holds before a staged loop and that the body gives a new
// key (AutoGraph's `y["a"] = ...` in a loop): thrown to the loop, which is staged
// again with the key in the dict before it (a stand-in of the type this attempt
// gave it) and a flag, carried, that some iteration assigned it. After the loop the
// flag is checked at run time, as AutoGraph does: the graph's dict has the key.
struct DictKeyRetry {
  int64_t loop;
  std::string name;  // the variable
  Value key;
  ir::Type type;
  SourceSpan span;  // the assignment
};

// The hidden flag of key `key` added to dict variable `name` by a staged loop.
inline std::string dict_key_flag(const std::string& name, const std::string& key_repr) {
  return "$defined." + name + "[" + key_repr + "]";
}

struct BlockPos {
  const std::vector<StmtPtr>* body = nullptr;
  size_t index = 0;                // the statement running
  const CallFrame* frame = nullptr;
  const Stmt* loop = nullptr;      // the loop whose body this is, if any
  bool continues = false;          // runs the rest of the block below (a guard)
};

// The incoming value of a tensor list in a staged loop body: a parameter of the
// body function, created when the element type is first known.
struct TensorListSlot {
  std::string name;
  FnBuilder* body = nullptr;
  int32_t param = -1;
  std::optional<ir::Type> type;  // [D, element dims...]
  // Item dims known only inside the loop (a list of inner lists stacked, whose
  // length is a run-time value): symbols of the list's own. The empty list has 0
  // there, and each append reshapes the list to the item's dims (a no-op but on the
  // first append; items of differing dims stop the run at the append).
  std::set<int32_t> open_dims;
};

struct ControlState {
  std::vector<BlockPos> blocks;
  // sg.relax: (fn, value) -> axis -> symbol id.
  std::map<std::pair<int32_t, int32_t>, std::map<int64_t, int32_t>> relaxed;
  // Stand-ins for a value on paths where it is never read (a return value
  // before the return): (fn, value).
  std::set<std::pair<int32_t, int32_t>> unset_values;
  // Per variable with a defined flag: why it may be unbound, for the run-time error
  // ("the staged while loop at line 5 ran zero times").
  std::map<std::string, std::string> unbound_why;
  // Staged loops being staged; appending to a list is allowed inside one.
  int staged_loops = 0;
  // Per staged loop being staged, innermost last: the lists and dicts visible
  // before it (ListObj, DictObj). Its body is staged once, so a list method other
  // than append on one of them would run once at compile time: refused.
  struct LoopContainers {
    const Stmt* loop = nullptr;
    std::string where;  // "the staged for loop at line 12"
    std::set<const void*> containers;
    int64_t token = -1;  // the loop's staging (a DictKeyRetry goes to it)
    // The dicts the body starts from for the dict variables the loop carries.
    std::map<const void*, std::string> carried_dicts;
  };
  std::vector<LoopContainers> loop_containers;
  // Per staged branch being staged, innermost last: the lists and dicts visible
  // before it, their lengths then, and the statement of the branch now staged
  // that first changed one's length, so an error can name the append.
  struct SizeWatch {
    const void* container;  // a ListObj or DictObj, kept alive by the branch's Container
    bool is_list = true;
    size_t size = 0;
    std::optional<SourceSpan> changed;
  };
  std::vector<std::vector<SizeWatch>> size_watches;
  // Dims that count the iterations of a staged loop that can run zero times
  // (the length of a list that was empty before it, a relaxed dim that was 0):
  // symbol -> where (SPEC §8's warning on reading a value that may then be empty).
  struct ZeroTripDim {
    std::string name;   // the variable the loop grows
    std::string where;  // "the staged for loop at line 12"
    int32_t fn = -1;    // the function the loop's results live in
  };
  std::map<int32_t, ZeroTripDim> zero_trip_dims;
  // The symbols whose read has been warned about.
  std::set<int32_t> zero_trip_warned;
};

// Warns when `dim` may be empty because a staged loop that can run zero times
// grows it from empty, and `what` (indexing, sg.stack) reads an element along
// it in the function that loop's results live in (a read inside a later
// staged branch or loop may be guarded by a test). `consequence` ends the message.
void warn_zero_trip_read(Stager& st, const ir::Dim& dim, const std::string& what, const std::string& consequence,
                         SourceSpan span);

// Records `span` (the statement just run) for each list or dict watched by a
// staged branch whose length it changed first.
void note_size_changes(ControlState& cs, SourceSpan span);

// Names live after the statement running in the innermost block of `frame`'s
// Python function (liveness.h over the statement stack).
std::set<std::string> live_after_current(const ControlState& cs, const CallFrame* frame);
// Why a value is staged, for --explain-staging: "depends on input 'n'".
std::string staged_reason(Stager& st, const Value& v);

// Is `v` a flag that is set (static True)?
inline bool flag_true(const Value* v) { return v && v->is<bool>() && v->as<bool>(); }
inline bool flag_staged(const Value* v) { return v && v->is<Staged>(); }

}  // namespace sg::compiler::staging
