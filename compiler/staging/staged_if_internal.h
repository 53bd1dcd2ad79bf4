// One staged `if` (BranchStaging) and what its two files share: staged_if.cc stages
// the branches and joins the variables they rebind; staged_if_containers.cc joins the
// lists and dicts they change. See Branches::staged_branches (staged_if.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "staging/classes.h"
#include "staging/control_state.h"

namespace sg::compiler::staging {
namespace if_detail {

bool same_binding(const Value& a, const Value& b);
// 'outs', or `state['h']` for an item reached through another container.
std::string quoted(const std::string& name);
// A dict's keys as messages show them: ['h', 'c'].
std::string keys_text(const std::vector<std::pair<Value, Value>>& kv);

struct Branch {
  std::unique_ptr<FnBuilder> builder;
  std::optional<RaiseSignal> raised;  // the branch raises (classes.h): it never completes
  std::map<std::string, Value> vars;
  std::vector<std::vector<Value>> list_items;                 // per Container, as the branch left them
  std::vector<std::vector<std::pair<Value, Value>>> dict_items;
  std::vector<std::optional<SourceSpan>> size_changed;  // per Container: the statement that first changed its length
  std::map<int32_t, Value> variables;  // the program's variables as the branch left them (ProgramVariables::current)
};

// A list or dict reachable from the scope before a staged `if`, and its items then.
struct Container {
  std::string name;  // as messages show it: outs, state['h'] (py_repr of each key)
  ListPtr list;
  DictPtr dict;
  std::vector<Value> list_items;
  std::vector<std::pair<Value, Value>> dict_items;
};

// Every list and dict reachable from `v` (named `name`), once each, with its items now.
void collect_containers(const std::string& name, const Value& v, std::vector<Container>& out);

}  // namespace if_detail

// One staged `if`, phase by phase: stage each branch (again where one is pending
// or raises), name what either rebinds, join variables and containers leaf by
// leaf into the If node's outputs, bind the captures, and emit the node.
class BranchStaging {
 public:
  using Branch = if_detail::Branch;
  using Container = if_detail::Container;
  BranchStaging(Stager& st, SourceSpan span, const std::string& label)
      : st_(st), sc_(st.scope()), span_(span), label_(label), rest_(label == "rest") {}
  void run(const Value& test, const std::function<void()>& then_fn, const std::function<void()>& else_fn);

 private:
  // Each variable joins leaf by leaf (tuples item by item); a leaf that differs
  // becomes an output, and a Make rebuilds the variable from the outputs.
  using Make = std::function<Value(const std::vector<Value>&)>;
  // Lists and dicts a branch changed: the items that differ join like variables.
  struct ContainerJoin {
    size_t index;
    std::vector<std::pair<size_t, Make>> items;  // item index -> its join
  };

  void watch_containers();
  void added_key_retry(size_t i, const std::vector<std::pair<Value, Value>>& t,
                       const std::vector<std::pair<Value, Value>>& e);
  Branch run_branch(const std::function<void()>& body, const std::string& suffix);
  Branch branch_or_pending(const std::function<void()>& body, const std::string& suffix, int k);
  void leave_stand_ins(const Branch& model, const std::function<Value(const Value&)>& stand_in);
  void restage_pending();
  void restage_raising();
  void describe_sides();
  void collect_names();
  void in_branch(int k, const std::function<void()>& f);
  void fill_return_value();
  Make join(const std::string& name, const std::string& shown, Value tv, Value ev);
  Make join_leaf(const std::string& name, const std::string& shown, Value tv, Value ev);
  std::optional<DType> leaf_dtype(const std::string& shown, const Value& tv, const Value& ev);
  size_t add_output(const std::string& name, const std::string& shown, const Value& tv, const Value& ev,
                    std::optional<DType> dt);
  Make number_make(size_t index, const Value& tv, const Value& ev);
  bool jumped(const std::map<std::string, Value>& vars) const;
  bool find_in_staged_loop();
  std::optional<Value> stand_in_like(const Value& model, bool sized = false);
  void stand_in_returned_vars();
  void join_variables();
  void unbound_on(int gone, const std::string& name);
  [[noreturn]] void size_mismatch(size_t i, const std::string& kind, const std::string& then_has,
                                  const std::string& else_has);
  void stand_in_returned_containers();
  void join_containers();
  void bind_captures();
  void emit_node();
  void add_program_variables();
  void take_program_variables();

  Stager& st_;
  Scope& sc_;
  const SourceSpan span_;
  const std::string label_;
  // The rest of a block after a staged jump is an If of its own, which the program does not spell.
  const bool rest_;
  int32_t cond_id_ = -1;
  std::map<std::string, Value> before_;
  std::map<int32_t, Value> variables_before_;
  std::vector<int32_t> joined_variables_;  // the program's variables a branch assigns
  std::vector<Container> containers_;
  size_t my_watch_ = 0;
  FnBuilder* parent_ = nullptr;
  std::string base_;
  // Probing a recursive function's result type: the side that met a recursive call of unknown result type.
  int pending_side_ = -1;
  std::optional<PendingResult> pending_;
  Branch then_b_, else_b_;
  Branch* branches_[2] = {&then_b_, &else_b_};
  bool both_raise_ = false;
  std::string construct_, then_where_, else_where_;
  std::vector<std::string> names_;
  std::vector<std::string> new_flags_;  // defined flags a one-sided assignment adds
  std::vector<std::string> out_names_;
  std::vector<ir::Type> out_types_;
  bool in_staged_loop_ = false;
  int returned_side_ = -1;
  std::vector<std::pair<std::string, Make>> makes_;
  std::vector<ContainerJoin> container_joins_;
  std::vector<Staged> outer_;
};

}  // namespace sg::compiler::staging
