// The executor with a device (executor.h, device_interface.h): op nodes run on
// the side DevicePlacement gives them, their operands copied there first.
#include <algorithm>
#include <string>

#include "executor.h"
#include "executor_detail.h"

namespace sg::runtime {

using detail::at;
using detail::at_alloc;
using detail::now_ns;
using detail::ref_of;

namespace {

bool same_type(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end());
}

}  // namespace

void Executor::set_device(DeviceContext* device, const DevicePlacement* placement, std::string name) {
  device_ = device;
  placement_ = placement;
  device_name_ = std::move(name);
  max_wave_ = 1;
  transfers_.assign(program_.functions.size(), TransferStats());
  device_constants_.resize(program_.functions.size());
  for (size_t f = 0; f < program_.functions.size(); ++f)
    device_constants_[f].resize(program_.functions[f].values.size());
}

Status Executor::download(uint32_t fn, const Tensor& from, Tensor& to) {
  const uint64_t start = now_ns();
  SG_ASSIGN_OR_RETURN(to, Tensor::empty(from.dtype(), from.shape(), &cache_));
  SG_RETURN_IF_ERROR(device_->download(to.data(), from.data(), from.nbytes()));
  TransferStats& t = transfers_[fn];
  ++t.downloads;
  t.download_ns += now_ns() - start;
  return Status::Ok();
}

Result<const Tensor*> Executor::host_copy(Frame& frame, const FunctionImpl& fn, uint32_t v, const NodeInfo* node) {
  const Tensor& t = value(frame, fn, v);
  if (t.device_memory() == nullptr) return &t;
  Mirror& m = frame.mirrors[v];
  if (m.copy.defined() && m.source.data() == t.data() && same_type(m.source, t)) return &m.copy;
  Tensor copy;
  const Status s = download(frame.fn, t, copy);
  if (!s.ok()) {
    const std::string why = s.message() + " (copying value " + std::to_string(v) + " to the host)";
    return node != nullptr ? at(*node, s.code(), why) : Status(s.code(), why);
  }
  m.source = t;
  m.copy = std::move(copy);
  return &m.copy;
}

Result<const Tensor*> Executor::device_copy(Frame& frame, const FunctionImpl& fn, uint32_t v, const NodeInfo& node) {
  const ValueInfo& info = fn.values[v];
  const Tensor& t = value(frame, fn, v);
  if (t.device_memory() != nullptr) return &t;
  // Constants go once per Session; other values once per frame that holds them.
  Tensor* kept = info.is_constant ? &device_constants_[frame.fn][v] : nullptr;
  Mirror* m = info.is_constant ? nullptr : &frame.mirrors[v];
  if (kept != nullptr && kept->defined()) return kept;
  if (m != nullptr && m->copy.defined() && m->source.data() == t.data() && same_type(m->source, t)) return &m->copy;
  const uint64_t start = now_ns();
  Result<Tensor> copy = Tensor::empty_on_device(t.dtype(), t.shape(), device_->memory());
  if (!copy.ok()) return at_alloc(node, copy.status());
  const Status s = device_->upload(copy->data(), t.data(), t.nbytes());
  if (!s.ok()) return at(node, s.code(), s.message() + " (copying value " + std::to_string(v) + " to " + device_name_ + ")");
  TransferStats& ts = transfers_[frame.fn];
  ++ts.uploads;
  ts.upload_ns += now_ns() - start;
  if (kept != nullptr) {
    *kept = std::move(copy).value();
    return kept;
  }
  m->source = t;
  m->copy = std::move(copy).value();
  return &m->copy;
}

Result<bool> Executor::condition(Frame& frame, const FunctionImpl& fn, uint32_t v, const NodeInfo& node,
                                 const char* what) {
  if (device_ == nullptr) return read_condition(operand(frame, fn, v), node, what);
  SG_ASSIGN_OR_RETURN(const Tensor* t, host_copy(frame, fn, v, &node));
  return read_condition(ref_of(*t), node, what);
}

Status Executor::results_to_host(uint32_t fn, std::vector<Tensor>& results) {
  const FunctionImpl& f = program_.functions[fn];
  for (Tensor& r : results) {
    if (r.device_memory() == nullptr) continue;
    Tensor host;
    const Status s = download(fn, r, host);
    if (!s.ok()) {
      results.clear();
      const std::string where = f.nodes.empty() ? std::string() : f.nodes.back().location + ": error: ";
      return Status(s.code(), where + s.message() + " (copying the results to the host)");
    }
    r = std::move(host);
  }
  return Status::Ok();
}

Status Executor::run_host_kernel(Frame& frame, const NodeInfo& node, std::span<const kernels::TensorRef> in,
                                 std::span<kernels::TensorRef> out) {
  const NodeKernel& kernel = frame.kernels[frame.pc];
  kernels::KernelContext ctx = direct_ctx_;
  const FramePlan& plan = *frame.plan;
  const size_t scratch = kernel.prepared != nullptr ? 0
                         : plan.static_node[frame.pc] ? plan.scratch_bytes[frame.pc]
                                                      : kernels::reference_scratch_size(node.op, node.attrs, in);
  SG_RETURN_IF_ERROR(reserve_scratch(scratch, node, ctx));
  return kernel.prepared != nullptr ? kernel.prepared->run(ctx, in, out) : kernel.fn(ctx, node.attrs, in, out);
}

Status Executor::run_placed(Frame& frame, const FunctionImpl& fn, const NodeInfo& node) {
  const FramePlan& plan = *frame.plan;
  const uint32_t pc = frame.pc;
  DeviceKernel* on_device = placement_->at(frame.fn, pc);
  const size_t n_in = node.inputs.size(), n_out = node.outputs.size();
  // Shapes set by run-time scalars, or by an operand's values (a nonzero count),
  // are inferred on the host, from host copies.
  const auto host_scalar = [&](size_t k) {
    return node.data_dependent_shape || (node.value_dependent_shape && fn.values[node.inputs[k]].dims.empty());
  };
  for (size_t k = 0; k < n_in; ++k) {
    const uint32_t v = node.inputs[k];
    SG_ASSIGN_OR_RETURN(const Tensor* t, on_device != nullptr && !host_scalar(k) ? device_copy(frame, fn, v, node)
                                                                                 : host_copy(frame, fn, v, &node));
    in_refs_[k] = ref_of(*t);
  }
  if (plan.static_node[pc]) {
    out_types_.resize(n_out);
    for (size_t k = 0; k < n_out; ++k) {
      out_types_[k].dtype = fn.values[node.outputs[k]].dtype;
      const std::span<const int64_t> s = plan.shape[node.outputs[k]].span();
      out_types_[k].shape.assign(s.begin(), s.end());
    }
  } else {
    SG_RETURN_IF_ERROR(infer_dynamic(fn, node));
  }
  if (on_device != nullptr)
    for (size_t k = 0; k < n_in; ++k)
      if (host_scalar(k)) {
        SG_ASSIGN_OR_RETURN(const Tensor* t, device_copy(frame, fn, node.inputs[k], node));
        in_refs_[k] = ref_of(*t);
      }
  for (size_t k = 0; k < n_out; ++k) {
    const uint32_t v = node.outputs[k];
    Result<Tensor> t = on_device != nullptr
                           ? Tensor::empty_on_device(out_types_[k].dtype, out_types_[k].shape, device_->memory())
                           : Tensor::empty(out_types_[k].dtype, out_types_[k].shape, &cache_);
    if (!t.ok()) return at_alloc(node, t.status());
    frame.slots[v] = std::move(t).value();
    frame.mirrors[v] = Mirror();
    out_refs_[k] = ref_of(frame.slots[v]);
  }
  const std::span<const kernels::TensorRef> in(in_refs_.data(), n_in);
  const std::span<kernels::TensorRef> out(out_refs_.data(), n_out);
  const uint64_t start = profile_ ? now_ns() : 0;
  const Status ran = on_device != nullptr ? device_->launch(*on_device, in, out) : run_host_kernel(frame, node, in, out);
  if (profile_) record(frame, pc, start);
  if (!ran.ok()) {
    if (on_device == nullptr) return kernel_failed(node, ran);
    return kernel_failed(node, Status(ran.code(), "'" + node.op_name + "' on " + device_name_ + ": " + ran.message()));
  }
  for (uint32_t k = plan.release_begin[pc]; k < plan.release_begin[pc + 1]; ++k) {
    frame.slots[plan.release[k]].reset();
    frame.mirrors[plan.release[k]] = Mirror();
  }
  return Status::Ok();
}

}  // namespace sg::runtime
