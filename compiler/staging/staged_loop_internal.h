// Internals of staged loops, shared by staged_loop.cc (the body, the condition and
// the node), staged_loop_carries.cc (what is carried) and staged_loop_values.cc (the
// structures and values a loop carries). See staged_loop.h.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "staging/classes.h"
#include "staging/liveness.h"
#include "staging/staged_loop.h"

namespace sg::compiler::staging::loop_detail {


// kTarget: a for target read after the loop that had no value before it: its initial
// value is a zero of the item's type, overwritten by the first iteration.
// kTarget also stands for a variable first assigned inside the loop and read after
// it, typed by its first iteration. kDefined: the defined flag (control_state.h) of
// such a variable where the loop may run zero times, or of a variable the loop
// assigns that may be unbound before it.
enum class CarryKind : uint8_t { kTensor, kList, kFlag, kReturnValue, kStatic, kTarget, kDefined };

struct Carry {
  std::string name;
  CarryKind kind = CarryKind::kTensor;
  Value init;                             // the value before the loop
  std::optional<WeakOrigin> weak;         // a Python number before the loop, or derived from one
  std::optional<ir::Type> type;           // the carried type, once known
  std::set<size_t> relaxed;               // axes that may change
  std::set<size_t> auto_relaxed;          // of those, the ones found changing (not declared)
  // kTensor: a variable first assigned inside the loop, carried from a zero of its
  // type (RetryHints::created); kDefined: its flag, a body parameter.
  bool created = false;
  std::shared_ptr<TensorListSlot> slot;   // kList
  int32_t body_param = -1, cond_param = -1, body_result = -1;
  Value body_value;                       // the value after one iteration
  bool dropped = false;
  // This loop's Python number (never retyped) that an iteration leaves a number:
  // `k = k * 2 + 1`, not `k = k + x[i]`. After the loop it stands for a Python
  // number still, which takes a tensor's dtype where it meets one, as in eager mode.
  bool number_after = false;
  // kList: an enclosing loop's list that nothing has appended to yet, so its item
  // type is unknown until this loop's body appends; resolved when the node is made.
  std::optional<TensorListV> outer_list;
};

struct Structure {
  std::string name;
  Value shape;                     // the value before the loop
  std::vector<std::string> leaves;  // the leaf carries' names, in order
};

// Instances reachable from the scope before a staged loop, and their
// attributes then: an attribute the body rebinds (`self.h = ...`, also inside
// a method it calls) is carried like a variable, under the hidden name
// "self.h" (AutoGraph's composite names).
struct AttrWatch {
  InstancePtr obj;
  std::string path;
  std::vector<std::pair<Value, Value>> items;
};
struct AttrCarry {
  InstancePtr obj;
  std::string attr;
  std::string name;  // "self.h"
};
// Thrown when a carried tensor's dims change across an iteration: the loop is
// staged again with those axes given fresh symbolic dims.
struct RelaxRetry {
  int64_t loop;
  std::string name;
  std::set<size_t> axes;
};
// Thrown when a variable first assigned inside the loop is assigned on some paths
// through an iteration only: the loop is staged again carrying it, as typed by this
// attempt, so that an iteration that skips it keeps the previous one's value.
struct CreatedRetry {
  int64_t loop;
  std::string name;
  ir::Type type;
};
// What earlier attempts found: per carried name, the axes that change, the types
// of variables first assigned inside the loop on some paths only, and the program's
// variables (sg.variables) the body assigns, also inside a function it calls.
struct RetryHints {
  std::map<std::string, std::set<size_t>> relax;
  std::map<std::string, ir::Type> created;
  std::vector<int32_t> variables;
  std::map<std::string, std::vector<std::pair<Value, ir::Type>>> dict_keys;  // DictKeyRetry's, per variable
};

// Thrown when staging the body found program variables to carry that this attempt did not.
struct VariableRetry {
  int64_t loop;
  std::vector<int32_t> variables;
};

// Thrown when staging the body found attributes to carry that this attempt did not.
struct AttrRetry {
  int64_t loop;
  std::vector<AttrCarry> carries;
};

std::string shown_name(const std::string& name);
// A return value's tensors and numbers, depth first (tuples and dicts within).
void return_leaves(Stager& st, const Value& v, std::vector<Value>& leaves, SourceSpan span, const std::string& where);
// The items of a tuple or list; null for anything else.
const std::vector<Value>* sequence_items(const Value& v);
// An attribute of an instance carried by a staged loop: tensors, numbers and
// containers of them; other attributes (strings, functions, classes) stay as they are.
bool carried_item(const Value& v);
// `shape` with its leaves replaced, in order, by leaves[k...] (a list is a new
// list: a loop body's item assignments stay in the body).
Value rebuild(const Value& shape, const std::vector<Value>& leaves, size_t& k);
// A tuple, list or dict (nested ones too) of tensors and numbers: carried by a
// staged loop as one value per leaf, rebuilt around them in the body, the cond
// and after the loop. `path` names each leaf for messages ("state[0]").
bool leaves_of(const Value& v, const std::string& path, std::vector<std::pair<std::string, Value>>& out);
// The list or dict object `v` holds; null for anything else.
inline const void* container_object(const Value& v) {
  if (v.is<DictPtr>()) return v.as<DictPtr>().get();
  if (v.is<ListPtr>()) return v.as<ListPtr>().get();
  return nullptr;
}
// Whether `v` has `shape`'s containers (kinds, lengths, keys in order).
bool same_structure(const Value& shape, const Value& v);
// Where `v` differs from `shape` in its containers or in a leaf that is not a tensor
// or number, for messages ("`state[1]` is a list of 2 items before the loop and a
// list of 3 items after an iteration"); empty where nothing differs.
std::string structure_difference(const Value& shape, const Value& v, const std::string& path);
void watch_instances(const std::string& path, const Value& v, std::vector<AttrWatch>& out, int depth);
bool same_value(const Value& a, const Value& b);
// The lists and dicts reachable from `v` (through tuples, lists and dicts).
void collect_containers(const Value& v, std::set<const void*>& out);

// Puts the watched attributes back as they were before the loop, unless dismissed.
struct AttrRestore {
  std::vector<AttrWatch>& watches;
  bool active = true;
  void restore() {
    for (AttrWatch& w : watches) w.obj->attrs->items = w.items;
  }
  ~AttrRestore() {
    if (active) restore();
  }
};

struct Counter {
  int& n;
  explicit Counter(int& c) : n(c) { ++n; }
  ~Counter() { --n; }
};

struct LoopContainersScope {
  ControlState& cs;
  LoopContainersScope(ControlState& c, const Stmt* loop, const std::string& where,
                      const std::map<std::string, Value>& vars, int64_t token)
      : cs(c) {
    ControlState::LoopContainers lc{loop, where, {}, token};
    for (const auto& [name, v] : vars) collect_containers(v, lc.containers);
    cs.loop_containers.push_back(std::move(lc));
  }
  ~LoopContainersScope() { cs.loop_containers.pop_back(); }
};

// One staging of a loop, phase by phase: what is carried (from the program text),
// the body, the condition, the While node, and the values after the loop.
// `hints`: the dtypes that carried Python numbers take (run_staged_loop).
class LoopStaging {
 public:
  LoopStaging(Stager& st_in, const StagedLoopSpec& spec_in, int64_t token_in,
              const std::map<std::string, DType>& hints_in, const std::vector<AttrCarry>& attr_carries_in,
              const RetryHints& retry_in);
  Flow run();

 private:
  // What is carried.
  void discover_carries();
  Carry tensor_carry(const std::string& name, const Value& init);
  void attribute_carries();
  void program_variable_carries();
  void variables_from_scope();
  void carry_assigned_variables();
  void target_carries();
  void variable_carries();
  Carry list_carry(const std::string& name, const Value* before);
  void flag_carries();
  void created_carry(const std::string& name, bool target);
  void defined_flag_carry(const std::string& name);
  // The keys earlier attempts found the body adds to dict variable `name`: put in
  // `dict` before the loop (stand-ins), each with a carried flag.
  void added_key_carries(const std::string& name, const Value& dict);
  void check_added_keys();
  void attrs_from_scope();
  void attrs_to_scope();
  void bind_structures();
  // The body.
  std::unique_ptr<FnBuilder> new_builder(const std::string& suffix);
  void bind_body_params();
  void stage_body();
  void carry_rebound_attrs();
  void structure_results();
  void body_results();
  void return_value_result(Carry& c, Value v);
  void list_result(Carry& c, const Value& v);
  void tensor_result(Carry& c, Value v);
  void created_result(Carry& c, const Value& v);
  // The condition.
  void stage_cond();
  Value eval_test();
  // The node and the values after it.
  std::vector<int32_t> node_inputs();
  void bind_function_params();
  void emit_node(std::vector<int32_t> inputs);
  void note_zero_trip_dims();
  void explain_relaxed();
  Value unset_of_type(const ir::Type& type);
  void undefine_after();

  Stager& st;
  const StagedLoopSpec& spec;
  const int64_t token;
  const std::map<std::string, DType>& hints;
  const std::vector<AttrCarry>& attr_carries;
  const RetryHints& retry;
  const Stmt& s;
  Scope& sc;
  std::vector<AttrWatch> watches;
  AttrRestore attr_restore{watches};
  ControlState& cs;
  ir::Module& m;
  const std::string where;
  // The program's variables as the loop starts (ProgramVariables::current).
  std::map<int32_t, Value> variables_before;
  NameSet after, entry, read_in_body, assigned, appended;
  LoopJumps jumps;
  std::vector<Carry> carries;
  std::vector<Structure> structures;
  // Per structure that is a list or dict: the object the body starts from, and
  // whether an iteration ends with that object (changed in place, so that after the
  // loop the object from before it is updated, and every name for it sees the change,
  // as in Python) rather than with another one bound to the name.
  std::map<std::string, const void*> body_objects;
  std::set<std::string> in_place;
  std::vector<std::pair<std::string, std::string>> undefined_after;  // name, message
  std::set<std::string> carried_targets;
  FnBuilder* outer = nullptr;
  std::map<std::string, Value> outer_vars;
  std::string base;
  std::unique_ptr<FnBuilder> body, cond;
  std::optional<Value> return_shape;
  std::vector<Carry> leaf_carries;
  // Tuples and dicts first assigned inside the loop: carried leaf by leaf, rebuilt after it.
  std::vector<Structure> created;
  std::vector<Staged> captured;
};

}  // namespace sg::compiler::staging::loop_detail
