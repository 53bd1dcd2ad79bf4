#include "executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

namespace sg::runtime {
namespace {

// Plans kept per function; more only while frames still run on all of them.
constexpr size_t kMaxPlansPerFunction = 8;

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

Status at(const NodeInfo& node, StatusCode code, const std::string& message) {
  return Status(code, node.location + ": error: " + message);
}

kernels::TensorRef ref_of(const Tensor& t) {
  kernels::TensorRef r;
  r.dtype = t.dtype();
  r.rank = t.rank();
  for (int i = 0; i < t.rank(); ++i) r.shape[i] = t.dim(i);
  r.data = const_cast<void*>(t.data());
  return r;
}

// Declared dims may be symbolic (-1): shown as "?".
std::string type_string(DType dtype, std::span<const int64_t> shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

kernels::TensorRef ref_of_planned(DType dtype, const PlannedShape& s, void* data) {
  kernels::TensorRef r;
  r.dtype = dtype;
  r.rank = s.rank;
  for (int i = 0; i < s.rank; ++i) r.shape[i] = s.dims[i];
  r.data = data;
  return r;
}

bool same_shape(std::span<const int64_t> a, std::span<const int64_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// movable[k]: list[k] may be taken from its slot: it dies here (`dying`) and does
// not occur again later in the list.
std::vector<uint8_t> movable(const FunctionImpl& fn, const std::vector<uint32_t>& list,
                             const std::vector<uint32_t>& dying, bool all_die) {
  std::vector<uint8_t> out(list.size(), 0);
  for (size_t k = 0; k < list.size(); ++k) {
    const uint32_t v = list[k];
    if (fn.values[v].is_constant) continue;
    if (!all_die && std::find(dying.begin(), dying.end(), v) == dying.end()) continue;
    out[k] = std::find(list.begin() + long(k) + 1, list.end(), v) == list.end();
  }
  return out;
}

}  // namespace

Executor::Executor(const ProgramImpl& program, const NodeKernels& kernels, Allocator* allocator, int max_call_depth,
                   bool profile)
    : cache_(allocator),
      frame_stack_(allocator),
      program_(program),
      kernels_(kernels),
      max_call_depth_(max_call_depth),
      profile_(profile) {
  for (const FunctionImpl& fn : program_.functions) {
    max_values_ = std::max(max_values_, fn.values.size());
    max_arity_ = std::max({max_arity_, fn.params.size(), fn.results.size()});
    for (const NodeInfo& node : fn.nodes) max_arity_ = std::max({max_arity_, node.inputs.size(), node.outputs.size()});
  }
  for (const FunctionImpl& fn : program_.functions) {
    Moves m;
    m.results = movable(fn, fn.results, {}, true);
    for (const NodeInfo& node : fn.nodes)
      m.inputs.push_back(node.kind == NodeKind::kOp ? std::vector<uint8_t>()
                                                    : movable(fn, node.inputs, node.release_after, false));
    moves_.push_back(std::move(m));
  }
  plans_.resize(program_.functions.size());
  last_plan_.assign(program_.functions.size(), nullptr);
  if (profile_)
    for (const FunctionImpl& fn : program_.functions) stats_.emplace_back(fn.nodes.size());
  args_.reserve(max_arity_);
  returned_.reserve(max_arity_);
  in_refs_.resize(max_arity_);
  out_refs_.resize(max_arity_);
  frames_.reserve(16);
}

Executor::~Executor() {
  // Tensors held here may live in the cache: release them while it exists.
  frames_.clear();
  args_.clear();
  returned_.clear();
  kernel_scratch_ = Tensor();
}

Status Executor::run(uint32_t fn, std::span<Tensor> args, std::vector<Tensor>& results) {
  active_calls_ = 0;
  live_ = peak_ = ArenaUse();
  Status s = push_frame(fn, Role::kEntry, args);
  if (s.ok()) s = loop(results);
  while (depth_ > 0) pop_frame();  // after a failure: release every frame
  return s;
}

Result<FramePlan*> Executor::find_plan(uint32_t fn, const std::vector<Tensor>& slots) {
  const FunctionImpl& f = program_.functions[fn];
  if (last_plan_[fn] != nullptr && plan_matches(*last_plan_[fn], f, slots)) return last_plan_[fn];
  std::vector<std::unique_ptr<FramePlan>>& cached = plans_[fn];
  for (const auto& p : cached)
    if (plan_matches(*p, f, slots)) return last_plan_[fn] = p.get();
  auto plan = std::make_unique<FramePlan>(make_plan(f, kernels_.of(fn), slots));
  if (cached.size() >= kMaxPlansPerFunction) {
    const auto idle = std::find_if(cached.begin(), cached.end(), [](const auto& p) { return p->active_frames == 0; });
    if (idle != cached.end()) cached.erase(idle);
  }
  cached.push_back(std::move(plan));
  return last_plan_[fn] = cached.back().get();
}

Status Executor::push_frame(uint32_t fn, Role role, std::span<Tensor> args) {
  const FunctionImpl& f = program_.functions[fn];
  if (depth_ == frames_.size()) {
    Frame& fresh = frames_.emplace_back();
    fresh.slots.reserve(max_values_);
    fresh.carried.reserve(max_arity_);
  }
  Frame& frame = frames_[depth_++];  // counted now, so a failure below pops it
  frame.fn = fn;
  frame.pc = 0;
  frame.role = role;
  frame.plan = nullptr;
  frame.kernels = kernels_.of(fn).data();
  frame.slots.resize(f.values.size());
  for (size_t k = 0; k < f.params.size(); ++k) frame.slots[f.params[k]] = std::move(args[k]);
  SG_ASSIGN_OR_RETURN(FramePlan * plan, find_plan(fn, frame.slots));
  frame.mark = frame_stack_.mark();
  SG_ASSIGN_OR_RETURN(frame.arena, frame_stack_.push(plan->arena_bytes));
  frame.plan = plan;
  ++plan->active_frames;
  live_.arena_bytes += plan->arena_bytes;
  live_.lower_bound_bytes += plan->lower_bound_bytes;
  if (live_.arena_bytes > peak_.arena_bytes) peak_ = live_;
  return Status::Ok();
}

void Executor::pop_frame() {
  Frame& frame = top();
  frame.slots.clear();  // releases the tensors, keeps the capacity for the next frame
  frame.carried.clear();
  if (frame.plan != nullptr) {
    --frame.plan->active_frames;
    live_.arena_bytes -= frame.plan->arena_bytes;
    live_.lower_bound_bytes -= frame.plan->lower_bound_bytes;
    frame_stack_.pop(frame.mark);
    frame.plan = nullptr;
  }
  --depth_;
}

void Executor::gather(Frame& frame, const FunctionImpl& fn, const uint32_t* begin, const uint32_t* end,
                      const uint8_t* movable, std::vector<Tensor>& out) const {
  out.clear();
  for (const uint32_t* v = begin; v != end; ++v, ++movable) {
    if (*movable)
      out.push_back(std::move(frame.slots[*v]));
    else
      out.push_back(value(frame, fn, *v));
  }
}

void Executor::release_inputs(Frame& frame, const NodeInfo& node) {
  for (uint32_t v : node.release_after) frame.slots[v] = Tensor();
}

Status Executor::loop(std::vector<Tensor>& results) {
  while (true) {
    Frame& frame = top();
    const FunctionImpl& fn = program_.functions[frame.fn];
    if (frame.pc < fn.nodes.size()) {
      const NodeInfo& node = fn.nodes[frame.pc];
      if (node.kind == NodeKind::kOp) {
        SG_RETURN_IF_ERROR(run_op(frame, fn, node));
        ++frame.pc;
      } else {
        SG_RETURN_IF_ERROR(start_control(node));  // pushes a frame: `frame` is stale now
      }
      continue;
    }
    const Role role = frame.role;
    const uint32_t* res = fn.results.data();
    const uint8_t* move = moves_[frame.fn].results.data();
    if (role == Role::kEntry) {
      gather(frame, fn, res, res + fn.results.size(), move, results);
      pop_frame();
      return Status::Ok();
    }
    gather(frame, fn, res, res + fn.results.size(), move, returned_);
    pop_frame();
    SG_RETURN_IF_ERROR(deliver(role));
  }
}

// Shapes of a node whose inputs were not all known when the frame was planned.
// Its inputs are in in_refs_.
Status Executor::infer_dynamic(const FunctionImpl& fn, const NodeInfo& node) {
  const size_t n_in = node.inputs.size();
  in_types_.resize(n_in);
  scalars_.assign(n_in, std::nullopt);
  for (size_t k = 0; k < n_in; ++k) {
    const kernels::TensorRef& t = in_refs_[k];
    in_types_[k].dtype = t.dtype;
    in_types_[k].shape.assign(t.shape, t.shape + t.rank);
    if (node.value_dependent_shape && t.rank == 0) {
      if (t.dtype == DType::kI64) scalars_[k] = *t.as<const int64_t>();
      if (t.dtype == DType::kI32) scalars_[k] = *t.as<const int32_t>();
    }
  }
  const Status inferred = ops::infer<int64_t>(node.op, node.attrs, in_types_, scalars_, out_types_, infer_ctx_);
  if (!inferred.ok()) return at(node, StatusCode::kRuntimeError, inferred.message());
  if (out_types_.size() != node.outputs.size())
    return at(node, StatusCode::kInternal, "op '" + node.op_name + "' inferred " + std::to_string(out_types_.size()) +
                                               " outputs for a node with " + std::to_string(node.outputs.size()));
  for (size_t k = 0; k < out_types_.size(); ++k) {
    const ops::TensorType<int64_t>& type = out_types_[k];
    const ValueInfo& declared = fn.values[node.outputs[k]];
    // The loader checked the graph against these declarations; a rule that
    // disagrees means the compiler and runtime differ, which must not go unnoticed.
    if (type.dtype != declared.dtype || type.rank() != declared.dims.size())
      return at(node, StatusCode::kRuntimeError,
                "op '" + node.op_name + "' produced " + type_string(type.dtype, type.shape) +
                    " but the graph declares " + type_string(declared.dtype, declared.dims));
  }
  return Status::Ok();
}

// A value the frame owns (not in its arena), for output `v` of the running node:
// written over a dying input when the kernel allows it and nobody else holds that
// input (an elementwise op), else a buffer of its own.
Status Executor::make_owned(Frame& frame, const NodeInfo& node, uint32_t v, DType dtype,
                            std::span<const int64_t> shape) {
  const FramePlan& plan = *frame.plan;
  if (frame.kernels[frame.pc].in_place_safe) {
    for (uint32_t k = plan.release_begin[frame.pc]; k < plan.release_begin[frame.pc + 1]; ++k) {
      Tensor& t = frame.slots[plan.release[k]];
      if (t.unique() && t.dtype() == dtype && same_shape(t.shape(), shape)) {
        frame.slots[v] = std::move(t);
        return Status::Ok();
      }
    }
  }
  Result<Tensor> t = Tensor::empty(dtype, shape, &cache_);
  if (!t.ok()) return at(node, t.status().code(), t.status().message());
  frame.slots[v] = std::move(t).value();
  return Status::Ok();
}

Status Executor::run_op(Frame& frame, const FunctionImpl& fn, const NodeInfo& node) {
  FramePlan& plan = *frame.plan;
  const uint32_t pc = frame.pc;
  const size_t n_in = node.inputs.size(), n_out = node.outputs.size();
  kernels::TensorRef* ins;
  kernels::TensorRef* outs;
  size_t scratch;
  if (plan.static_node[pc]) {
    // Shapes were fixed by the plan: only the data pointers change between runs.
    ins = plan.refs.data() + plan.ref_begin[pc];
    outs = ins + n_in;
    for (size_t k = 0; k < n_in; ++k) {
      const uint32_t v = node.inputs[k];
      ins[k].data = plan.placement[v] == Placement::kArena ? frame.arena + plan.offset[v]
                                                           : const_cast<void*>(value(frame, fn, v).data());
    }
    for (size_t k = 0; k < n_out; ++k) {
      const uint32_t v = node.outputs[k];
      if (plan.placement[v] == Placement::kArena) {
        outs[k].data = frame.arena + plan.offset[v];
      } else {
        SG_RETURN_IF_ERROR(make_owned(frame, node, v, outs[k].dtype, std::span<const int64_t>(outs[k].shape, size_t(outs[k].rank))));
        outs[k].data = frame.slots[v].data();
      }
    }
    scratch = plan.scratch_bytes[pc];
  } else {
    ins = in_refs_.data();
    outs = out_refs_.data();
    for (size_t k = 0; k < n_in; ++k) {
      const uint32_t v = node.inputs[k];
      if (plan.placement[v] == Placement::kArena) {
        ins[k] = ref_of_planned(fn.values[v].dtype, plan.shape[v], frame.arena + plan.offset[v]);
      } else {
        ins[k] = ref_of(value(frame, fn, v));
      }
    }
    SG_RETURN_IF_ERROR(infer_dynamic(fn, node));
    for (size_t k = 0; k < n_out; ++k) {
      const uint32_t v = node.outputs[k];
      SG_RETURN_IF_ERROR(make_owned(frame, node, v, out_types_[k].dtype, out_types_[k].shape));
      outs[k] = ref_of(frame.slots[v]);
    }
    scratch = kernels::reference_scratch_size(node.op, node.attrs, std::span<const kernels::TensorRef>(ins, n_in));
  }

  kernels::KernelContext ctx;
  ctx.threadpool = kernels_.threadpool();
  if (scratch > 0) {
    if (size_t(kernel_scratch_.numel()) < scratch || !kernel_scratch_.defined()) {
      const int64_t n = int64_t(scratch);
      kernel_scratch_ = Tensor();
      Result<Tensor> t = Tensor::empty(DType::kBool, std::span<const int64_t>(&n, 1), &cache_);
      if (!t.ok()) return at(node, t.status().code(), t.status().message());
      kernel_scratch_ = std::move(t).value();
    }
    ctx.scratch = kernel_scratch_.data();
    ctx.scratch_size = size_t(kernel_scratch_.numel());
  }
  const NodeKernel& kernel = frame.kernels[pc];
  const std::span<const kernels::TensorRef> in_span(ins, n_in);
  const std::span<kernels::TensorRef> out_span(outs, n_out);
  const uint64_t start = profile_ ? now_ns() : 0;
  const Status ran = kernel.prepared != nullptr ? kernel.prepared->run(ctx, in_span, out_span)
                                                : kernel.fn(ctx, node.attrs, in_span, out_span);
  if (profile_) {
    NodeStats& st = stats_[frame.fn][pc];
    ++st.calls;
    st.total_ns += now_ns() - start;
  }
  if (!ran.ok()) return at(node, ran.code(), ran.message());
  for (uint32_t k = plan.release_begin[pc]; k < plan.release_begin[pc + 1]; ++k) frame.slots[plan.release[k]] = Tensor();
  return Status::Ok();
}

void Executor::finish_node(Frame& frame, const NodeInfo& node, std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < node.outputs.size(); ++k) frame.slots[node.outputs[k]] = std::move(outputs[k]);
  outputs.clear();
  for (uint32_t v : node.dead_outputs) frame.slots[v] = Tensor();
}

Result<bool> Executor::read_condition(const Tensor& t, const NodeInfo& node, const char* what) const {
  if (t.dtype() != DType::kBool || t.numel() != 1 || !t.defined())
    return at(node, StatusCode::kRuntimeError, std::string(what) + " must be a bool scalar, got " +
                                                   type_string(t.dtype(), t.shape()));
  return *t.data_as<uint8_t>() != 0;
}

Status Executor::start_control(const NodeInfo& node) {
  Frame& frame = top();
  const FunctionImpl& fn = program_.functions[frame.fn];
  if (profile_) frame.start_ns = now_ns();
  const uint32_t* in = node.inputs.data();
  const uint8_t* move = moves_[frame.fn].inputs[frame.pc].data();
  switch (node.kind) {
    case NodeKind::kIf: {
      SG_ASSIGN_OR_RETURN(const bool cond,
                          read_condition(value(frame, fn, in[0]), node, "the condition of 'if'"));
      gather(frame, fn, in + 1, in + node.inputs.size(), move + 1, args_);
      release_inputs(frame, node);
      return push_frame(node.functions[cond ? 0 : 1], Role::kIfBranch, args_);
    }
    case NodeKind::kWhile: {
      gather(frame, fn, in, in + node.inputs.size(), move, frame.carried);
      release_inputs(frame, node);
      args_.assign(frame.carried.begin(), frame.carried.end());
      return push_frame(node.functions[0], Role::kWhileCond, args_);
    }
    case NodeKind::kCall: {
      const uint32_t callee = node.functions[0];
      if (active_calls_ >= max_call_depth_)
        return at(node, StatusCode::kLimitExceeded,
                  "recursion depth limit " + std::to_string(max_call_depth_) + " exceeded calling '" +
                      program_.functions[callee].name + "'");
      ++active_calls_;
      gather(frame, fn, in, in + node.inputs.size(), move, args_);
      release_inputs(frame, node);
      return push_frame(callee, Role::kCall, args_);
    }
    case NodeKind::kOp: break;
  }
  return internal_error("not a control-flow node");
}

// Hands a finished frame's results (returned_) to the caller, now on top.
Status Executor::deliver(Role role) {
  Frame& frame = top();
  const NodeInfo& node = program_.functions[frame.fn].nodes[frame.pc];
  switch (role) {
    case Role::kCall:
      --active_calls_;
      [[fallthrough]];
    case Role::kIfBranch:
      finish_node(frame, node, returned_);
      break;
    case Role::kWhileCond: {
      SG_ASSIGN_OR_RETURN(const bool go_on, read_condition(returned_[0], node, "the condition of 'while'"));
      returned_.clear();
      if (!go_on) {
        finish_node(frame, node, frame.carried);
        break;
      }
      // The body takes the carried values over: moved, so it may own them alone.
      // Swapped, not move-assigned, so both vectors keep a buffer.
      std::swap(args_, frame.carried);
      frame.carried.clear();
      return push_frame(node.functions[1], Role::kWhileBody, args_);
    }
    case Role::kWhileBody:
      std::swap(frame.carried, returned_);
      returned_.clear();
      args_.assign(frame.carried.begin(), frame.carried.end());
      return push_frame(node.functions[0], Role::kWhileCond, args_);
    case Role::kEntry:
      return internal_error("the entry frame has no caller");
  }
  if (profile_) {
    // `frame` is still the caller here: nothing was pushed.
    NodeStats& st = stats_[frame.fn][frame.pc];
    ++st.calls;
    st.total_ns += now_ns() - frame.start_ns;
  }
  ++frame.pc;
  return Status::Ok();
}

}  // namespace sg::runtime
