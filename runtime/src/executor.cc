#include "executor.h"

#include <chrono>
#include <cstring>
#include <string>

namespace sg::runtime {
namespace {

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
std::string type_string(DType dtype, const std::vector<int64_t>& shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

}  // namespace

Executor::Executor(const ProgramImpl& program, Allocator* allocator, int max_call_depth, bool profile)
    : program_(program), allocator_(allocator), max_call_depth_(max_call_depth), profile_(profile) {
  if (profile_) {
    for (const FunctionImpl& fn : program_.functions) stats_.emplace_back(fn.nodes.size());
  }
}

Status Executor::run(uint32_t fn, std::vector<Tensor>& args, std::vector<Tensor>& results) {
  active_calls_ = 0;
  push_frame(fn, Role::kEntry, args);
  Status s = loop(results);
  while (!stack_.empty()) pop_frame();  // after a failure: release every frame
  return s;
}

void Executor::push_frame(uint32_t fn, Role role, std::vector<Tensor>& args) {
  const FunctionImpl& f = program_.functions[fn];
  Frame frame;
  frame.fn = fn;
  frame.role = role;
  if (!spare_slots_.empty()) {
    frame.slots = std::move(spare_slots_.back());
    spare_slots_.pop_back();
  }
  frame.slots.resize(f.values.size());
  for (size_t k = 0; k < f.params.size(); ++k) frame.slots[f.params[k]] = std::move(args[k]);
  args.clear();
  stack_.push_back(std::move(frame));
}

void Executor::pop_frame() {
  Frame& top = stack_.back();
  top.slots.clear();  // releases the tensors, keeps the capacity for the next frame
  top.carried.clear();
  spare_slots_.push_back(std::move(top.slots));
  stack_.pop_back();
}

void Executor::gather(const Frame& frame, const FunctionImpl& fn, const uint32_t* begin,
                      const uint32_t* end, std::vector<Tensor>& out) const {
  out.clear();
  for (const uint32_t* v = begin; v != end; ++v) out.push_back(value(frame, fn, *v));
}

void Executor::release_inputs(Frame& frame, const NodeInfo& node) {
  for (uint32_t v : node.release_after) frame.slots[v] = Tensor();
}

Status Executor::loop(std::vector<Tensor>& results) {
  while (true) {
    Frame& top = stack_.back();
    const FunctionImpl& fn = program_.functions[top.fn];
    if (top.pc < fn.nodes.size()) {
      const NodeInfo& node = fn.nodes[top.pc];
      if (node.kind == NodeKind::kOp) {
        SG_RETURN_IF_ERROR(run_op(top, fn, node));
        ++top.pc;
      } else {
        SG_RETURN_IF_ERROR(start_control(node));  // pushes a frame: `top` is stale now
      }
      continue;
    }
    gather(top, fn, fn.results.data(), fn.results.data() + fn.results.size(), returned_);
    const Role role = top.role;
    pop_frame();
    if (role == Role::kEntry) {
      results = std::move(returned_);
      returned_.clear();
      return Status::Ok();
    }
    SG_RETURN_IF_ERROR(deliver(role));
  }
}

Status Executor::run_op(Frame& frame, const FunctionImpl& fn, const NodeInfo& node) {
  const size_t n_in = node.inputs.size(), n_out = node.outputs.size();
  in_types_.resize(n_in);
  in_refs_.resize(n_in);
  scalars_.assign(n_in, std::nullopt);
  for (size_t k = 0; k < n_in; ++k) {
    const Tensor& t = value(frame, fn, node.inputs[k]);
    in_types_[k].dtype = t.dtype();
    in_types_[k].shape.assign(t.shape().begin(), t.shape().end());
    in_refs_[k] = ref_of(t);
    if (node.value_dependent_shape && t.rank() == 0) {
      if (t.dtype() == DType::kI64) scalars_[k] = *t.data_as<int64_t>();
      if (t.dtype() == DType::kI32) scalars_[k] = *t.data_as<int32_t>();
    }
  }
  const Status inferred = ops::infer<int64_t>(node.op, node.attrs, in_types_, scalars_, out_types_, infer_ctx_);
  if (!inferred.ok()) return at(node, StatusCode::kRuntimeError, inferred.message());
  if (out_types_.size() != n_out)
    return at(node, StatusCode::kInternal, "op '" + node.op_name + "' inferred " + std::to_string(out_types_.size()) +
                                               " outputs for a node with " + std::to_string(n_out));

  args_.clear();  // the outputs, until they move into their slots
  out_refs_.resize(n_out);
  for (size_t k = 0; k < n_out; ++k) {
    const ops::TensorType<int64_t>& type = out_types_[k];
    const ValueInfo& declared = fn.values[node.outputs[k]];
    // The loader checked the graph against these declarations; a rule that
    // disagrees means the compiler and runtime differ, which must not go unnoticed.
    if (type.dtype != declared.dtype || type.rank() != declared.dims.size())
      return at(node, StatusCode::kRuntimeError,
                "op '" + node.op_name + "' produced " + type_string(type.dtype, type.shape) +
                    " but the graph declares " + type_string(declared.dtype, declared.dims));
    Result<Tensor> t = Tensor::empty(type.dtype, type.shape, allocator_);
    if (!t.ok()) return at(node, t.status().code(), t.status().message());
    args_.push_back(std::move(t).value());
    out_refs_[k] = ref_of(args_.back());
  }

  kernels::KernelContext ctx;
  const size_t scratch = kernels::reference_scratch_size(node.op, node.attrs, in_refs_);
  if (scratch > 0) {
    if (size_t(kernel_scratch_.numel()) < scratch || !kernel_scratch_.defined()) {
      const int64_t n = int64_t(scratch);
      Result<Tensor> s = Tensor::empty(DType::kBool, std::span<const int64_t>(&n, 1), allocator_);
      if (!s.ok()) return at(node, s.status().code(), s.status().message());
      kernel_scratch_ = std::move(s).value();
    }
    ctx.scratch = kernel_scratch_.data();
    ctx.scratch_size = size_t(kernel_scratch_.numel());
  }
  const uint64_t start = profile_ ? now_ns() : 0;
  const Status ran = node.kernel(ctx, node.attrs, in_refs_, out_refs_);
  if (profile_) {
    NodeStats& st = stats_[frame.fn][frame.pc];
    ++st.calls;
    st.total_ns += now_ns() - start;
  }
  if (!ran.ok()) return at(node, ran.code(), ran.message());
  release_inputs(frame, node);
  finish_node(frame, node, args_);
  return Status::Ok();
}

void Executor::finish_node(Frame& frame, const NodeInfo& node, std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < node.outputs.size(); ++k) frame.slots[node.outputs[k]] = std::move(outputs[k]);
  outputs.clear();
  for (uint32_t v : node.dead_outputs) frame.slots[v] = Tensor();
}

Result<bool> Executor::read_condition(const Tensor& t, const NodeInfo& node, const char* what) const {
  if (t.dtype() != DType::kBool || t.numel() != 1 || !t.defined())
    return at(node, StatusCode::kRuntimeError,
              std::string(what) + " must be a bool scalar, got " +
                  type_string(t.dtype(), std::vector<int64_t>(t.shape().begin(), t.shape().end())));
  return *t.data_as<uint8_t>() != 0;
}

Status Executor::start_control(const NodeInfo& node) {
  Frame& frame = stack_.back();
  const FunctionImpl& fn = program_.functions[frame.fn];
  if (profile_) frame.start_ns = now_ns();
  const uint32_t* in = node.inputs.data();
  switch (node.kind) {
    case NodeKind::kIf: {
      SG_ASSIGN_OR_RETURN(const bool cond,
                          read_condition(value(frame, fn, in[0]), node, "the condition of 'if'"));
      gather(frame, fn, in + 1, in + node.inputs.size(), args_);
      release_inputs(frame, node);
      push_frame(node.functions[cond ? 0 : 1], Role::kIfBranch, args_);
      return Status::Ok();
    }
    case NodeKind::kWhile: {
      gather(frame, fn, in, in + node.inputs.size(), frame.carried);
      release_inputs(frame, node);
      args_.assign(frame.carried.begin(), frame.carried.end());
      push_frame(node.functions[0], Role::kWhileCond, args_);
      return Status::Ok();
    }
    case NodeKind::kCall: {
      const uint32_t callee = node.functions[0];
      if (active_calls_ >= max_call_depth_)
        return at(node, StatusCode::kLimitExceeded,
                  "recursion depth limit " + std::to_string(max_call_depth_) + " exceeded calling '" +
                      program_.functions[callee].name + "'");
      ++active_calls_;
      gather(frame, fn, in, in + node.inputs.size(), args_);
      release_inputs(frame, node);
      push_frame(callee, Role::kCall, args_);
      return Status::Ok();
    }
    case NodeKind::kOp: break;
  }
  return internal_error("not a control-flow node");
}

// Hands a finished frame's results (returned_) to the caller, now on top.
Status Executor::deliver(Role role) {
  Frame& frame = stack_.back();
  const NodeInfo& node = program_.functions[frame.fn].nodes[frame.pc];
  bool done = true;
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
      if (go_on) {
        // The body takes the carried values over: moved, so it may own them alone.
        args_ = std::move(frame.carried);
        frame.carried.clear();
        push_frame(node.functions[1], Role::kWhileBody, args_);
        done = false;
      } else {
        finish_node(frame, node, frame.carried);
      }
      break;
    }
    case Role::kWhileBody:
      std::swap(frame.carried, returned_);
      returned_.clear();
      args_.assign(frame.carried.begin(), frame.carried.end());
      push_frame(node.functions[0], Role::kWhileCond, args_);
      done = false;
      break;
    case Role::kEntry:
      return internal_error("the entry frame has no caller");
  }
  if (done) {
    if (profile_) {
      // `frame` is still the caller here: nothing was pushed.
      NodeStats& st = stats_[frame.fn][frame.pc];
      ++st.calls;
      st.total_ns += now_ns() - frame.start_ns;
    }
    ++frame.pc;
  }
  return Status::Ok();
}

}  // namespace sg::runtime
