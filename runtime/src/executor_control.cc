// If, While and Call: how the executor enters graph functions and takes their
// results back. See executor.h for how a While loop moves its carried values.
#include <algorithm>
#include <string>

#include "executor.h"
#include "executor_detail.h"

namespace sg::runtime {

using detail::at;
using detail::now_ns;
using detail::source_name;
using detail::type_string;

namespace {

// An arena value has its declared dtype and rank (the plan checked them).
bool fn_declares_bool_scalar(const FunctionImpl& fn, uint32_t v) {
  return fn.values[v].dtype == DType::kBool && fn.values[v].dims.empty();
}

}  // namespace

Status Executor::finish_node(Frame& frame, const NodeInfo& node, std::vector<Tensor>& outputs) {
  const FunctionImpl& fn = program_.functions[frame.fn];
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    // The plan takes a result's static declared dims as its shape (what follows
    // the node runs without inference), so they are checked as it arrives.
    const ValueInfo& declared = fn.values[node.outputs[k]];
    const Tensor& t = outputs[k];
    bool agrees = t.dtype() == declared.dtype && t.shape().size() == declared.dims.size();
    for (size_t d = 0; agrees && d < declared.dims.size(); ++d)
      agrees = declared.dims[d] < 0 || declared.dims[d] == t.shape()[d];
    if (!agrees) [[unlikely]] {
      const Status error = at(node, StatusCode::kRuntimeError,
                              "'" + node.op_name + "' produced " + type_string(t.dtype(), t.shape()) + " as result " +
                                  std::to_string(k) + " but the graph declares " +
                                  type_string(declared.dtype, declared.dims));
      outputs.clear();
      return error;
    }
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) frame.slots[node.outputs[k]] = std::move(outputs[k]);
  outputs.clear();
  for (uint32_t v : node.dead_outputs) frame.slots[v].reset();
  return Status::Ok();
}

Result<bool> Executor::read_condition(const kernels::TensorRef& t, const NodeInfo& node, const char* what) const {
  if (t.dtype != DType::kBool || t.numel() != 1 || t.data == nullptr)
    return at(node, StatusCode::kRuntimeError, std::string(what) + " must be a bool scalar, got " +
                                                   type_string(t.dtype, std::span<const int64_t>(t.shape, size_t(t.rank))));
  return *t.as<const uint8_t>() != 0;
}

void Executor::unpin_loop(Frame& frame) {
  if (frame.body_plan != nullptr) --frame.body_plan->active_frames;
  frame.body_plan = nullptr;
  frame.loop_stable = false;
  frame.cond_beneath = false;
}

Status Executor::start_control(const NodeInfo& node) {
  Frame& frame = top();
  const FunctionImpl& fn = program_.functions[frame.fn];
  if (profile_) frame.start_ns = now_ns();
  const uint32_t* in = node.inputs.data();
  const uint8_t* move = facts_[frame.fn].inputs[frame.pc].data();
  switch (node.kind) {
    case NodeKind::kIf: {
      SG_ASSIGN_OR_RETURN(const bool cond, condition(frame, fn, in[0], node, "the condition of 'if'"));
      gather(frame, fn, in + 1, in + node.inputs.size(), move + 1, args_);
      release_inputs(frame, node);
      return push_frame(node.functions[cond ? 0 : 1], Role::kIfBranch, args_);
    }
    case NodeKind::kWhile:
      // The cond frame holds the carried values from here to the loop's end.
      gather(frame, fn, in, in + node.inputs.size(), move, args_);
      release_inputs(frame, node);
      return push_frame(node.functions[0], Role::kWhileCond, args_);
    case NodeKind::kCall: {
      const uint32_t callee = node.functions[0];
      if (active_calls_ >= max_call_depth_)
        return at(node, StatusCode::kLimitExceeded,
                  "recursion depth limit " + std::to_string(max_call_depth_) + " exceeded calling '" +
                      source_name(program_.functions[callee].name) + "'");
      SG_RETURN_IF_ERROR(reserve_frame(node, callee));
      ++active_calls_;
      gather(frame, fn, in, in + node.inputs.size(), move, args_);
      release_inputs(frame, node);
      return push_frame(callee, Role::kCall, args_);
    }
    case NodeKind::kOp: break;
  }
  return internal_error("not a control-flow node");
}

Result<bool> Executor::loop_condition(Frame& cond, const NodeInfo& node) {
  const FunctionImpl& cf = program_.functions[cond.fn];
  // The bool is read where it lies (often the cond's arena).
  const uint32_t r = cf.results[0];
  const FramePlan& plan = *cond.plan;
  if (plan.placement[r] == Placement::kArena && fn_declares_bool_scalar(cf, r))
    return *static_cast<const uint8_t*>(static_cast<const void*>(cond.arena + plan.offset[r])) != 0;
  return condition(cond, cf, r, node, "the condition of 'while'");
}

Status Executor::finish_cond() {
  Frame& cond = top();
  const FunctionImpl& cf = program_.functions[cond.fn];
  Frame& caller = frames_[depth_ - 2];
  const NodeInfo& node = program_.functions[caller.fn].nodes[caller.pc];
  SG_ASSIGN_OR_RETURN(const bool go_on, loop_condition(cond, node));
  if (!go_on) {
    caller.carried.clear();
    for (uint32_t p : cf.params) caller.carried.push_back(std::move(cond.slots[p]));
    pop_frame();
    if (profile_) {  // before finish_node moves the carried values to the outputs
      const FunctionImpl& fn = program_.functions[caller.fn];
      uint64_t bytes = 0;
      for (size_t k = 0; k < node.outputs.size() && k < caller.carried.size(); ++k)
        if (fn.values[node.outputs[k]].tape) bytes += caller.carried[k].nbytes();
      NodeStats& st = stats_[caller.fn][caller.pc];
      st.tape_bytes = std::max(st.tape_bytes, bytes);
    }
    SG_RETURN_IF_ERROR(finish_node(caller, node, caller.carried));
    if (profile_) record(caller, caller.pc, caller.start_ns);
    ++caller.pc;
    return Status::Ok();
  }
  // The body takes the carried values over: moved, so it may own them alone.
  FramePlan* const known = cond.loop_stable ? cond.body_plan : nullptr;
  const uint32_t cond_fn = cond.fn;
  Frame& body = enter(node.functions[1], Role::kWhileBody);  // `cond` and `caller` may be stale now
  const FunctionImpl& bf = program_.functions[body.fn];
  std::vector<Tensor>& held = frames_[depth_ - 2].slots;
  const std::vector<uint32_t>& held_at = program_.functions[cond_fn].params;
  for (size_t k = 0; k < bf.params.size(); ++k) body.slots[bf.params[k]] = std::move(held[held_at[k]]);
  return enter_plan(body, known);
}

void Executor::move_results(Frame& body, Frame& cond) {
  const FunctionImpl& bf = program_.functions[body.fn];
  const std::vector<uint32_t>& to = program_.functions[cond.fn].params;
  const uint8_t* move = facts_[body.fn].results.data();
  for (size_t k = 0; k < bf.results.size(); ++k) {
    const uint32_t r = bf.results[k];
    if (move[k])
      cond.slots[to[k]] = std::move(body.slots[r]);
    else
      cond.slots[to[k]] = value(body, bf, r);
  }
}

Status Executor::finish_body() {
  if (should_poll()) [[unlikely]]  // the loop's back-edge
    SG_RETURN_IF_ERROR(check_interrupt(node_at(depth_ - 3)));
  Frame& body = top();
  Frame& cond = frames_[depth_ - 2];
  const FunctionImpl& cf = program_.functions[cond.fn];
  move_results(body, cond);
  if (cond.cond_beneath) return next_iteration(body, cond);
  FramePlan* const body_plan = body.plan;
  pop_frame();
  if (!cond.loop_stable) {
    if (body_plan->preserves_key) {
      // The carried types did not change, and never will: the cond's plan (which
      // matched them) and this body plan fit every later iteration.
      cond.body_plan = body_plan;
      ++body_plan->active_frames;
      cond.loop_stable = true;
      // A cond that pushes no frame of its own can run beneath the body's.
      cond.cond_beneath = std::none_of(cond.plan->steps.begin(), cond.plan->steps.end(),
                                       [](const PlanStep& s) { return s.mode == StepMode::kControl; });
    } else if (!plan_matches(*cond.plan, cf, cond.slots, true)) {
      // Values the old plan left in slots (owned results) may be arena values
      // under the next one, which would never release them.
      const uint8_t* is_param = facts_[cond.fn].is_param.data();
      for (uint32_t v : cond.plan->held)
        if (!is_param[v]) cond.slots[v].reset();
      leave_plan(cond);
      SG_RETURN_IF_ERROR(enter_plan(cond, nullptr));
    }
  }
  cond.pc = 0;
  return Status::Ok();
}

Status Executor::next_iteration(Frame& body, Frame& cond) {
  const FunctionImpl& bf = program_.functions[body.fn];
  const FunctionImpl& cf = program_.functions[cond.fn];
  const Frame& caller = frames_[depth_ - 3];
  const NodeInfo& node = program_.functions[caller.fn].nodes[caller.pc];
  bool in_registers = false;
  SG_RETURN_IF_ERROR(run_in_registers(body, cond, in_registers));
  if (in_registers) {
    pop_frame();  // the body; the finished cond, now on top, ends the loop
    return Status::Ok();
  }
  const uint32_t n = uint32_t(body.plan->steps.size());
  // Where the cond's bool lies, when that is its arena (the usual case).
  const uint32_t r = cf.results[0];
  const uint8_t* flag = cond.plan->placement[r] == Placement::kArena && fn_declares_bool_scalar(cf, r)
                            ? cond.arena + cond.plan->offset[r]
                            : nullptr;
  // The slots an iteration moves between, resolved once: frames and their slot
  // vectors stay where they are while this loop runs (nothing is pushed).
  const uint8_t* move = facts_[body.fn].results.data();
  loop_back_.clear();
  for (size_t k = 0; k < bf.results.size(); ++k)
    loop_back_.push_back({&value(body, bf, bf.results[k]), &cond.slots[cf.params[k]], move[k] != 0});
  loop_forth_.clear();
  for (size_t k = 0; k < bf.params.size(); ++k)
    loop_forth_.push_back({&cond.slots[cf.params[k]], &body.slots[bf.params[k]], true});
  loop_drop_.clear();
  for (uint32_t v : body.plan->held) loop_drop_.push_back(&body.slots[v]);
  while (true) {
    if (should_poll()) [[unlikely]]  // the loop's back-edge
      SG_RETURN_IF_ERROR(check_interrupt(&node));
    // The body's results are in the cond's parameters. What the body still holds
    // (shared results, values it never released) goes, as pop_frame would release
    // it; its arena, plan and bound pointers stay.
    for (Tensor* t : loop_drop_) t->reset();
    cond.pc = 0;
    SG_RETURN_IF_ERROR(profile_ ? run_steps<true>(cond) : run_steps<false>(cond));
    bool go_on;
    if (flag != nullptr) {
      go_on = *flag != 0;
    } else {
      SG_ASSIGN_OR_RETURN(go_on, loop_condition(cond, node));
    }
    if (!go_on) {
      pop_frame();  // the body; the finished cond, now on top, ends the loop
      return Status::Ok();
    }
    for (const CarriedMove& m : loop_forth_) *m.to = std::move(*const_cast<Tensor*>(m.from));
    body.pc = 0;
    SG_RETURN_IF_ERROR(profile_ ? run_steps<true>(body) : run_steps<false>(body));
    // A control-flow node in the body: the main loop runs it, and finish_body
    // comes back here when the body ends.
    if (body.pc < n) return Status::Ok();
    for (const CarriedMove& m : loop_back_) {
      if (m.move)
        *m.to = std::move(*const_cast<Tensor*>(m.from));
      else
        *m.to = *m.from;
    }
  }
}

Status Executor::deliver(Role role) {
  Frame& frame = top();
  const NodeInfo& node = program_.functions[frame.fn].nodes[frame.pc];
  switch (role) {
    case Role::kCall:
      --active_calls_;
      if (profile_) {  // a gradient's forward of a recursion hands its tapes back here
        const FunctionImpl& fn = program_.functions[frame.fn];
        uint64_t bytes = 0;
        for (size_t k = 0; k < node.outputs.size() && k < returned_.size(); ++k)
          if (fn.values[node.outputs[k]].tape) bytes += returned_[k].nbytes();
        NodeStats& st = stats_[frame.fn][frame.pc];
        st.tape_bytes = std::max(st.tape_bytes, bytes);
      }
      [[fallthrough]];
    case Role::kIfBranch:
      SG_RETURN_IF_ERROR(finish_node(frame, node, returned_));
      break;
    case Role::kWhileCond:
    case Role::kWhileBody:
    case Role::kEntry:
      return internal_error("this frame hands no results to its caller");
  }
  if (profile_) record(frame, frame.pc, frame.start_ns);  // `frame` is still the caller: nothing was pushed
  ++frame.pc;
  return Status::Ok();
}

}  // namespace sg::runtime
