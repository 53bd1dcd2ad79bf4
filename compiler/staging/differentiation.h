// The Differentiation concern of the stager (SPEC §11, DESIGN.md #14): sg.grad,
// sg.value_and_grad, sg.vjp, sg.checkpoint, sg.stop_gradient and the functions
// they return; sg.logsumexp and sg.nn's losses (sg_grad.cc), and what the reverse
// pass (autodiff*.cc) must know of the program: the values no gradient flows
// through, the vjp= rules of custom ops, the functions sg.checkpoint made.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "staging/stager.h"

namespace sg::compiler::staging {

class Differentiation {
 public:
  explicit Differentiation(Stager& s) : s_(s) {}
  Differentiation(const Differentiation&) = delete;
  Differentiation& operator=(const Differentiation&) = delete;

  // sg.NAME for the names above.
  Value call_sg(const std::string& name, Args& args);
  // A call of a function a transform returned (sg.grad(f), a vjp's pullback, ...).
  Value call_transform(const TransformV& t, Args& args);
  // log of a value whose form is unstable (softmax, sum(exp), 1 + exp, sigmoid):
  // the stable form, said with --explain-staging; nullopt for any other value.
  std::optional<Value> stable_log(const Value& x, SourceSpan span);

  // Values sg.stop_gradient made, (function, value): no gradient flows through them.
  void stop_gradient_at(int32_t fn, int32_t id) { stopped_gradients_.insert({fn, id}); }
  bool gradient_stopped(int32_t fn, int32_t id) const { return stopped_gradients_.count({fn, id}) != 0; }
  // Function `to` is a copy of `from` (same value ids): its values stop the same.
  void copy_stopped_gradients(int32_t from, int32_t to);

  // The vjp= rule of custom op `op`; null when it has none.
  void set_custom_vjp(const std::string& op, Value rule) { custom_vjps_[op] = std::move(rule); }
  const Value* custom_vjp(const std::string& op) const;

  // Functions made by sg.checkpoint -> the segment length a loop calling them keeps
  // states at (0: at iterations 0, 1, 4, 9, ..., O(sqrt T) of them).
  void set_checkpoint_segment(int32_t fn, int64_t segment) { checkpoint_segments_[fn] = segment; }
  bool is_checkpoint(int32_t fn) const { return checkpoint_segments_.count(fn) != 0; }
  const std::map<int32_t, int64_t>& checkpoint_segments() const { return checkpoint_segments_; }

 private:
  Stager& s_;
  std::set<std::pair<int32_t, int32_t>> stopped_gradients_;
  std::map<std::string, Value> custom_vjps_;
  std::map<int32_t, int64_t> checkpoint_segments_;
};

}  // namespace sg::compiler::staging
