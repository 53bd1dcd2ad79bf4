#include "executor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "executor_detail.h"

namespace sg::runtime {

using detail::at;
using detail::at_alloc;
using detail::now_ns;
using detail::ref_of;
using detail::ref_of_planned;
using detail::source_name;
using detail::type_string;

namespace {

// Plans kept per function; more only while frames still run on all of them.
constexpr size_t kMaxPlansPerFunction = 8;
// Exact plans of one signature's dtypes and ranks before the dims that differ
// between them are left open (a tensor list grows every iteration).
constexpr size_t kExactPlansBeforeOpen = 3;

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
                   bool profile, bool concurrent)
    : cache_(allocator),
      frame_stack_(allocator),
      host_(allocator != nullptr ? allocator : default_allocator()),
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
    FunctionFacts f;
    f.results = movable(fn, fn.results, {}, true);
    for (const NodeInfo& node : fn.nodes)
      f.inputs.push_back(node.kind == NodeKind::kOp ? std::vector<uint8_t>()
                                                    : movable(fn, node.inputs, node.release_after, false));
    f.is_param.assign(fn.values.size(), 0);
    for (uint32_t p : fn.params) f.is_param[p] = 1;
    facts_.push_back(std::move(f));
  }
  plans_.resize(program_.functions.size());
  last_plan_.assign(program_.functions.size(), nullptr);
  if (profile_)
    for (const FunctionImpl& fn : program_.functions) stats_.emplace_back(fn.nodes.size());
  args_.reserve(max_arity_);
  returned_.reserve(max_arity_);
  loop_back_.reserve(max_arity_);
  loop_forth_.reserve(max_arity_);
  loop_drop_.reserve(max_values_);
  reg_params_.reserve(max_arity_);
  reg_addr_.resize(max_values_);
  in_refs_.resize(max_arity_);
  out_refs_.resize(max_arity_);
  frames_.reserve(16);
  direct_ctx_.threadpool = kernels_.threadpool();
  direct_ctx_.interrupt = &interrupt_;
  direct_ctx_.team = kernels_.team();
  max_wave_ = concurrent ? kernels_.num_threads() : 1;
  if (max_wave_ > 1) {
    wave_status_.resize(size_t(max_wave_));
    wave_ns_.resize(size_t(max_wave_));
  }
}

Executor::~Executor() {
  // Tensors held here may live in the cache: release them while it exists.
  frames_.clear();
  args_.clear();
  returned_.clear();
  kernel_scratch_ = Tensor();
  reg_file_ = Tensor();
}

Status Executor::run(uint32_t fn, std::span<Tensor> args, std::vector<Tensor>& results) {
  active_calls_ = 0;
  live_ = peak_ = ArenaUse();
  Status s = check_interrupt(nullptr);
  if (s.ok()) s = push_frame(fn, Role::kEntry, args);
  if (s.ok()) s = loop(results);
  while (depth_ > 0) pop_frame();  // after a failure: release every frame
  if (s.ok() && device_ != nullptr) s = results_to_host(fn, results);
  return s;
}

Result<FramePlan*> Executor::find_plan(uint32_t fn, const std::vector<Tensor>& slots, bool borrow) {
  const FunctionImpl& f = program_.functions[fn];
  if (last_plan_[fn] != nullptr && plan_matches(*last_plan_[fn], f, slots, borrow)) return last_plan_[fn];
  std::vector<std::unique_ptr<FramePlan>>& cached = plans_[fn];
  for (const auto& p : cached)
    if (plan_matches(*p, f, slots, borrow)) return last_plan_[fn] = p.get();
  PlanRequest request;
  request.borrow = borrow;
  request.open = varying_params(cached, f, slots, borrow, kExactPlansBeforeOpen);
  request.max_wave = max_wave_;
  request.general = device_ != nullptr;
  auto plan = std::make_unique<FramePlan>(make_plan(f, kernels_.of(fn), slots, request));
  if (cached.size() >= kMaxPlansPerFunction) {
    const auto idle = std::find_if(cached.begin(), cached.end(), [](const auto& p) { return p->active_frames == 0; });
    if (idle != cached.end()) cached.erase(idle);
  }
  cached.push_back(std::move(plan));
  return last_plan_[fn] = cached.back().get();
}

namespace {

// Why a run was asked to end, from the interrupt flag's bits (a cancel first).
std::pair<StatusCode, std::string> interruption(uint32_t bits, uint32_t cancel_bit, uint64_t timeout_ns) {
  if (bits & cancel_bit) return {StatusCode::kCancelled, "the run was cancelled"};
  return {StatusCode::kDeadlineExceeded,
          "the run passed its deadline (a timeout of " + std::to_string(timeout_ns / 1000) + " us)"};
}

}  // namespace

Status Executor::check_interrupt(const NodeInfo* node) const {
  const uint32_t bits = interrupt_.load(std::memory_order_relaxed);
  if (bits == 0) return Status::Ok();
  auto [code, what] = interruption(bits, kCancelRequested, timeout_ns_);
  if (node == nullptr) return Status(code, what + " before it started");
  return at(*node, code, what + ", stopped before '" + node->op_name + "'");
}

Status Executor::kernel_failed(const NodeInfo& node, const Status& failed) const {
  const uint32_t bits = interrupt_.load(std::memory_order_relaxed);
  if (bits == 0) return at(node, failed.code(), failed.message());
  auto [code, what] = interruption(bits, kCancelRequested, timeout_ns_);
  return at(node, code, what + ", stopped in '" + node.op_name + "'");
}

const NodeInfo* Executor::largest_arena_value_node(uint32_t fn, const FramePlan& plan) const {
  const FunctionImpl& f = program_.functions[fn];
  const NodeInfo* best = nullptr;
  uint64_t best_bytes = 0;
  for (const NodeInfo& node : f.nodes)
    for (uint32_t v : node.outputs) {
      if (plan.placement[v] != Placement::kArena || !plan.known[v]) continue;
      uint64_t bytes = dtype_size(f.values[v].dtype);
      for (int d = 0; d < plan.shape[v].rank; ++d) bytes *= uint64_t(plan.shape[v].dims[d]);
      if (best == nullptr || bytes > best_bytes) {
        best = &node;
        best_bytes = bytes;
      }
    }
  return best;
}

const NodeInfo* Executor::node_at(size_t index) const {
  for (size_t i = index + 1; i-- > 0;) {
    const Frame& f = frames_[i];
    const FunctionImpl& fn = program_.functions[f.fn];
    if (f.pc < fn.nodes.size()) return &fn.nodes[f.pc];
  }
  return nullptr;
}

Executor::Frame& Executor::enter(uint32_t fn, Role role) {
  if (depth_ == frames_.size()) {
    // May move the frames (a moved vector keeps its buffer, so spans into a
    // frame's vectors stay valid; references to frames do not).
    Frame& fresh = frames_.emplace_back();
    fresh.slots.resize(max_values_);
    fresh.carried.reserve(max_arity_);
  }
  Frame& frame = frames_[depth_++];  // counted now, so a failure later pops it
  frame.fn = fn;
  frame.pc = 0;
  frame.role = role;
  frame.borrowed = role == Role::kWhileCond;
  frame.plan = nullptr;
  frame.kernels = kernels_.of(fn).data();
  // A popped frame left its slots empty; they are only ever grown.
  const size_t n = program_.functions[fn].values.size();
  if (frame.slots.size() < n) frame.slots.resize(n);
  if (device_ != nullptr && frame.mirrors.size() < n) frame.mirrors.resize(n);
  return frame;
}

Status Executor::reserve_frame(const NodeInfo& call, uint32_t callee) {
  if (depth_ < frames_.size()) return Status::Ok();
  size_t bytes = (max_values_ + max_arity_) * sizeof(Tensor);
  if (frames_.size() == frames_.capacity()) bytes += (2 * frames_.capacity() + 1) * sizeof(Frame);
  void* probe = host_->allocate(bytes, alignof(std::max_align_t));
  if (probe == nullptr)
    return at(call, StatusCode::kOutOfMemory,
              "out of memory for call depth " + std::to_string(active_calls_ + 1) + " calling '" +
                  source_name(program_.functions[callee].name) + "' (" + std::to_string(bytes) + " bytes more)");
  host_->deallocate(probe, bytes, alignof(std::max_align_t));
  return Status::Ok();
}

// A frame's arena that cannot be had (out of memory, or over the Session's memory
// limit): the message names the node whose tensor is the largest in it (its op,
// type and FILE:LINE:COL), which is what to look at.
Status Executor::arena_failure(uint32_t fn, const FramePlan& plan, const Status& cause) const {
  const FunctionImpl& f = program_.functions[fn];
  const NodeInfo* biggest = nullptr;
  uint32_t biggest_value = 0;
  uint64_t biggest_bytes = 0;
  for (const NodeInfo& node : f.nodes) {
    for (uint32_t v : node.outputs) {
      if (v >= plan.placement.size() || plan.placement[v] != Placement::kArena || !plan.known[v]) continue;
      uint64_t bytes = dtype_size(f.values[v].dtype);
      for (int64_t d : plan.shape[v].span())
        bytes = d > 0 && bytes > UINT64_MAX / uint64_t(d) ? UINT64_MAX : bytes * uint64_t(d);
      if (bytes >= biggest_bytes) {
        biggest = &node;
        biggest_value = v;
        biggest_bytes = bytes;
      }
    }
  }
  const std::string what = "cannot allocate the " + std::to_string(plan.arena_bytes) + "-byte arena of '" +
                           source_name(f.name) + "' (" + cause.message() + ")";
  if (biggest == nullptr) {
    // No tensor of its own to blame: the node of the frame below that entered it.
    const NodeInfo* node = depth_ >= 2 ? node_at(depth_ - 2) : nullptr;
    return node != nullptr ? at_alloc(*node, Status(cause.code(), what)) : Status(cause.code(), what);
  }
  return at(*biggest, cause.code(),
            what + "; its largest tensor is this '" + biggest->op_name + "' result, " +
                type_string(f.values[biggest_value].dtype, plan.shape[biggest_value].span()) + " (" +
                std::to_string(biggest_bytes) + " bytes)");
}

Status Executor::enter_plan(Frame& frame, FramePlan* plan) {
  if (plan == nullptr) {
    SG_ASSIGN_OR_RETURN(plan, find_plan(frame.fn, frame.slots, frame.borrowed));
  }
  frame.mark = frame_stack_.mark();
  Result<uint8_t*> arena = frame_stack_.push(plan->arena_bytes);
  if (!arena.ok()) return arena_failure(frame.fn, *plan, arena.status());
  frame.arena = *arena;
  frame.plan = plan;
  ++plan->active_frames;
  live_.arena_bytes += plan->arena_bytes;
  live_.lower_bound_bytes += plan->lower_bound_bytes;
  if (live_.arena_bytes > peak_.arena_bytes) peak_ = live_;
  return Status::Ok();
}

void Executor::leave_plan(Frame& frame) {
  if (frame.plan == nullptr) return;
  --frame.plan->active_frames;
  live_.arena_bytes -= frame.plan->arena_bytes;
  live_.lower_bound_bytes -= frame.plan->lower_bound_bytes;
  frame_stack_.pop(frame.mark);
  frame.plan = nullptr;
}

Status Executor::push_frame(uint32_t fn, Role role, std::span<Tensor> args) {
  Frame& frame = enter(fn, role);
  const FunctionImpl& f = program_.functions[fn];
  for (size_t k = 0; k < f.params.size(); ++k) frame.slots[f.params[k]] = std::move(args[k]);
  return enter_plan(frame, nullptr);
}

void Executor::pop_frame() {
  Frame& frame = top();
  // Releases the tensors; the slots stay, empty, for the next frame here.
  if (frame.plan != nullptr) {
    for (uint32_t v : frame.plan->held) frame.slots[v].reset();
  } else {
    const size_t n = program_.functions[frame.fn].values.size();
    for (size_t v = 0; v < n; ++v) frame.slots[v].reset();
  }
  frame.carried.clear();
  for (Mirror& m : frame.mirrors) m = Mirror();  // empty without a device
  unpin_loop(frame);
  leave_plan(frame);
  --depth_;
}

void Executor::gather(Frame& frame, const FunctionImpl& fn, const uint32_t* begin, const uint32_t* end,
                      const uint8_t* movable, std::vector<Tensor>& out) const {
  out.clear();
  const uint8_t* is_param = facts_[frame.fn].is_param.data();
  for (const uint32_t* v = begin; v != end; ++v, ++movable) {
    if (*movable && !(frame.borrowed && is_param[*v]))
      out.push_back(std::move(frame.slots[*v]));
    else
      out.push_back(value(frame, fn, *v));
  }
}

void Executor::release_inputs(Frame& frame, const NodeInfo& node) {
  const uint8_t* is_param = facts_[frame.fn].is_param.data();
  for (uint32_t v : node.release_after)
    if (!(frame.borrowed && is_param[v])) frame.slots[v].reset();
}

Status Executor::loop(std::vector<Tensor>& results) {
  while (true) {
    Frame& frame = top();
    const FramePlan& plan = *frame.plan;
    const uint32_t n = uint32_t(plan.steps.size());
    if (frame.pc < n) {
      if (plan.steps[frame.pc].mode == StepMode::kControl) {
        if (should_poll()) [[unlikely]]  // a Call entry, or an If or While start
          SG_RETURN_IF_ERROR(check_interrupt(&program_.functions[frame.fn].nodes[frame.pc]));
        SG_RETURN_IF_ERROR(start_control(program_.functions[frame.fn].nodes[frame.pc]));  // `frame` is stale now
        continue;
      }
      // Two copies of the node loop, so that a run without profiling tests no flag per node.
      SG_RETURN_IF_ERROR(profile_ ? run_steps<true>(frame) : run_steps<false>(frame));
      if (frame.pc < n) continue;  // it stopped at a control-flow node
    }
    const FunctionImpl& fn = program_.functions[frame.fn];
    const Role role = frame.role;
    if (role == Role::kWhileCond || role == Role::kWhileBody) {
      SG_RETURN_IF_ERROR(role == Role::kWhileCond ? finish_cond() : finish_body());
      continue;
    }
    const uint32_t* res = fn.results.data();
    const uint8_t* move = facts_[frame.fn].results.data();
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

template <bool kProfile>
Status Executor::run_steps(Frame& frame) {
  FramePlan& plan = *frame.plan;
  PlanStep* const steps = plan.steps.data();
  kernels::TensorRef* const refs = plan.refs.data();
  const OperandBind* const binds = plan.binds.data();
  const uint32_t* const release = plan.release.data();
  uint8_t* const arena = frame.arena;
  Tensor* const slots = frame.slots.data();
  const uint32_t n = uint32_t(plan.steps.size());
  const kernels::KernelContext& ctx = direct_ctx_;
  for (uint32_t pc = frame.pc; pc < n; ++pc) {
    PlanStep& step = steps[pc];
    if (should_poll()) [[unlikely]] {
      frame.pc = pc;
      SG_RETURN_IF_ERROR(check_interrupt(&program_.functions[frame.fn].nodes[pc]));
    }
    if (step.mode <= StepMode::kFixed) [[likely]] {
      kernels::TensorRef* const ops = refs + step.ref_begin;
      const OperandBind* b = binds + step.bind_begin;
      if (step.bound_arena != arena) {
        for (const OperandBind* e = b + step.n_arena; b != e; ++b) refs[b->ref].data = arena + b->offset;
        step.bound_arena = arena;
      } else {
        b += step.n_arena;
      }
      for (const OperandBind* e = b + step.n_slot; b != e; ++b)
        refs[b->ref].data = const_cast<void*>(slots[b->value].data());
      if (step.n_owned != 0) {
        // After the inputs: an output written over a dying input takes its buffer.
        frame.pc = pc;
        for (const OperandBind* e = b + step.n_owned; b != e; ++b) {
          kernels::TensorRef& r = refs[b->ref];
          if (b->offset != kNoReuse && slots[b->offset].unique()) [[likely]] {
            slots[b->value] = std::move(slots[b->offset]);
            r.data = slots[b->value].data();
            continue;
          }
          SG_RETURN_IF_ERROR(make_owned(frame, program_.functions[frame.fn].nodes[pc], b->value, r.dtype,
                                        std::span<const int64_t>(r.shape, size_t(r.rank))));
          r.data = slots[b->value].data();
        }
      }
      const uint64_t start = kProfile ? now_ns() : 0;
      if (step.mode == StepMode::kFixed) {
        step.fixed(step.word, ops);
      } else {
        const std::span<const kernels::TensorRef> in(ops, step.n_in);
        const std::span<kernels::TensorRef> out(ops + step.n_in, step.n_out);
        const Status ran =
            step.prepared != nullptr ? step.prepared->run(ctx, in, out) : step.fn(ctx, *step.attrs, in, out);
        if (!ran.ok()) [[unlikely]] {
          if (kProfile) record(frame, pc, start);
          frame.pc = pc;
          return kernel_failed(program_.functions[frame.fn].nodes[pc], ran);
        }
      }
      if (kProfile) record(frame, pc, start);
      for (const uint32_t* r = release + step.release_begin, *e = r + step.n_release; r != e; ++r) slots[*r].reset();
      continue;
    }
    frame.pc = pc;
    const FunctionImpl& fn = program_.functions[frame.fn];
    switch (step.mode) {
      case StepMode::kGeneral:
        SG_RETURN_IF_ERROR(run_op(frame, fn, fn.nodes[pc]));
        break;
      case StepMode::kControl:
        return Status::Ok();  // the caller starts it
      case StepMode::kWave:
        SG_RETURN_IF_ERROR(run_wave(frame, step));
        [[fallthrough]];
      case StepMode::kRan:
        for (const uint32_t* r = release + step.release_begin, *e = r + step.n_release; r != e; ++r) slots[*r].reset();
        break;
      case StepMode::kDirect:
      case StepMode::kFixed:
        break;
    }
  }
  frame.pc = n;
  return Status::Ok();
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
  // A length only the operands' values decide (a nonzero count): the kernel family
  // reports it from the inputs in in_refs_ (host memory here), then the rule sizes
  // the output and make_owned allocates it, as any shape known only mid-run.
  infer_ctx_.reported = {};
  if (node.data_dependent_shape) {
    const Status reported =
        kernels::reported_dims(node.op, node.attrs, std::span<const kernels::TensorRef>(in_refs_.data(), n_in), reported_);
    if (!reported.ok()) return at(node, StatusCode::kInternal, reported.message());
    infer_ctx_.reported = reported_;
  }
  const Status inferred = ops::infer<int64_t>(node.op, node.attrs, in_types_, scalars_, out_types_, infer_ctx_);
  infer_ctx_.reported = {};
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
  if (!t.ok()) return at_alloc(node, t.status());
  frame.slots[v] = std::move(t).value();
  return Status::Ok();
}

Status Executor::run_op(Frame& frame, const FunctionImpl& fn, const NodeInfo& node) {
  if (device_ != nullptr) return run_placed(frame, fn, node);
  FramePlan& plan = *frame.plan;
  const uint32_t pc = frame.pc;
  if (frame.kernels[pc].appends && !frame.borrowed && plan.placement[node.outputs[0]] != Placement::kArena) {
    bool handled = false;
    SG_RETURN_IF_ERROR(run_append(frame, fn, node, handled));
    if (handled) return Status::Ok();
  }
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
  ctx.team = kernels_.team();
  ctx.print = direct_ctx_.print;
  ctx.print_user = direct_ctx_.print_user;
  ctx.interrupt = &interrupt_;
  SG_RETURN_IF_ERROR(reserve_scratch(scratch, node, ctx));
  const NodeKernel& kernel = frame.kernels[pc];
  const std::span<const kernels::TensorRef> in_span(ins, n_in);
  const std::span<kernels::TensorRef> out_span(outs, n_out);
  const uint64_t start = profile_ ? now_ns() : 0;
  const Status ran = kernel.prepared != nullptr ? kernel.prepared->run(ctx, in_span, out_span)
                                                : kernel.fn(ctx, node.attrs, in_span, out_span);
  if (profile_) record(frame, pc, start);
  if (!ran.ok()) return kernel_failed(node, ran);
  for (uint32_t k = plan.release_begin[pc]; k < plan.release_begin[pc + 1]; ++k) frame.slots[plan.release[k]].reset();
  return Status::Ok();
}

Status Executor::reserve_scratch(size_t bytes, const NodeInfo& node, kernels::KernelContext& ctx) {
  if (bytes == 0) return Status::Ok();
  if (size_t(kernel_scratch_.numel()) < bytes || !kernel_scratch_.defined()) {
    const int64_t n = int64_t(bytes);
    kernel_scratch_ = Tensor();
    Result<Tensor> t = Tensor::empty(DType::kBool, std::span<const int64_t>(&n, 1), &cache_);
    if (!t.ok()) return at_alloc(node, t.status());
    kernel_scratch_ = std::move(t).value();
  }
  ctx.scratch = kernel_scratch_.data();
  ctx.scratch_size = size_t(kernel_scratch_.numel());
  return Status::Ok();
}

void Executor::record(const Frame& frame, uint32_t pc, uint64_t start) {
  NodeStats& st = stats_[frame.fn][pc];
  ++st.calls;
  st.total_ns += now_ns() - start;
}

kernels::TensorRef Executor::operand(const Frame& frame, const FunctionImpl& fn, uint32_t v) const {
  const FramePlan& plan = *frame.plan;
  if (plan.placement[v] == Placement::kArena)
    return ref_of_planned(fn.values[v].dtype, plan.shape[v], frame.arena + plan.offset[v]);
  return ref_of(value(frame, fn, v));
}

}  // namespace sg::runtime
