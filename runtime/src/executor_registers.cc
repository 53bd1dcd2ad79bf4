// Loops on a register file. A stable While loop whose cond runs beneath its body
// (executor.h) still moves every carried value twice per iteration and binds its
// operands' data pointers from slots on every node. When the cond and the body are
// straight lines of direct steps and every carried value is small (a counter, a
// flag, an accumulator: the loops of searches and iterations over scalars), the
// loop instead runs to its end here: each carried value gets one fixed register,
// every value the body's plan owns gets another, all TensorRefs are bound once, and
// an iteration is the kernels' calls, the flag test and a copy of each changed
// result back into its register. The same kernels run on the same bytes, so the
// results are those of the usual path; the carried values go back into the cond's
// slots when the loop ends.
#include <algorithm>
#include <cstring>

#include "executor.h"
#include "executor_detail.h"

namespace sg::runtime {

using detail::at;
using detail::at_alloc;

namespace {

// The largest value a register holds, and the distance between registers (a
// kernel may read 16 bytes past an operand; the file ends with kTensorPadding).
constexpr size_t kRegisterBytes = 64;
constexpr size_t kRegisterStride = 64;

bool direct_only(const FramePlan& plan) {
  return std::all_of(plan.steps.begin(), plan.steps.end(),
                     [](const PlanStep& s) { return s.mode == StepMode::kDirect || s.mode == StepMode::kFixed; });
}

size_t owned_outputs(const FramePlan& plan) {
  size_t n = 0;
  for (const PlanStep& s : plan.steps) n += s.n_owned;
  return n;
}

inline void copy_bytes(uint8_t* to, const uint8_t* from, uint32_t bytes) {
  switch (bytes) {
    case 1: *to = *from; return;
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    default: std::memcpy(to, from, bytes); return;
  }
}

}  // namespace

bool Executor::bind_registers(const Frame& frame, uint8_t*& next, const uint8_t* end) {
  const FunctionImpl& fn = program_.functions[frame.fn];
  const FramePlan& plan = *frame.plan;
  void** addr = reg_addr_.data();
  std::fill(addr, addr + fn.values.size(), nullptr);
  for (size_t k = 0; k < fn.params.size(); ++k) addr[fn.params[k]] = reg_params_[k];
  for (uint32_t pc = 0; pc < uint32_t(plan.steps.size()); ++pc) {
    const PlanStep& step = plan.steps[pc];
    const uint32_t first = uint32_t(reg_refs_.size());
    const auto refs = plan.refs.begin() + step.ref_begin;
    reg_refs_.insert(reg_refs_.end(), refs, refs + step.n_in + step.n_out);  // constants come bound
    const auto ref = [&](const OperandBind& b) -> kernels::TensorRef& {
      return reg_refs_[first + (b.ref - step.ref_begin)];
    };
    const OperandBind* b = plan.binds.data() + step.bind_begin;
    for (const OperandBind* e = b + step.n_arena; b != e; ++b) addr[b->value] = ref(*b).data = frame.arena + b->offset;
    for (const OperandBind* e = b + step.n_slot; b != e; ++b) {
      if (addr[b->value] == nullptr) return false;  // a slot value made nowhere in the loop
      ref(*b).data = addr[b->value];
    }
    for (const OperandBind* e = b + step.n_owned; b != e; ++b) {
      kernels::TensorRef& r = ref(*b);
      if (r.nbytes() > kRegisterBytes || next == end) return false;
      addr[b->value] = r.data = next;
      next += kRegisterStride;
    }
    if (step.mode == StepMode::kFixed)
      reg_ops_.push_back({nullptr, nullptr, nullptr, step.fixed, step.word, first, step.n_in, step.n_out, frame.fn, pc});
    else
      reg_ops_.push_back({step.fn, step.prepared, step.attrs, nullptr, 0, first, step.n_in, step.n_out, frame.fn, pc});
  }
  return true;
}

Status Executor::run_in_registers(Frame& body, Frame& cond, bool& ran) {
  ran = false;
  // Profiling times nodes one by one, through the usual path.
  if (profile_ || !direct_only(*cond.plan) || !direct_only(*body.plan)) return Status::Ok();
  const FunctionImpl& bf = program_.functions[body.fn];
  const FunctionImpl& cf = program_.functions[cond.fn];
  const size_t n_carried = cf.params.size();
  if (bf.params.size() != n_carried || bf.results.size() != n_carried) return Status::Ok();
  for (uint32_t p : cf.params) {
    const Tensor& t = cond.slots[p];
    if (t.data() == nullptr || t.nbytes() > kRegisterBytes) return Status::Ok();
  }
  // The cond's flag must be read where the cond's caller reads it afterwards
  // (loop_condition): its arena, or a carried value's slot.
  const uint32_t r = cf.results[0];
  const bool flag_is_param = std::find(cf.params.begin(), cf.params.end(), r) != cf.params.end();
  if (cf.values[r].dtype != DType::kBool || !cf.values[r].dims.empty() ||
      !(flag_is_param || cond.plan->placement[r] == Placement::kArena))
    return Status::Ok();

  // Registers: carried values, staging for their copies back, owned values.
  const size_t registers = 2 * n_carried + owned_outputs(*cond.plan) + owned_outputs(*body.plan);
  const size_t bytes = registers * kRegisterStride + kTensorPadding;
  if (size_t(reg_file_.numel()) < bytes) {
    const int64_t n = int64_t(bytes);
    reg_file_ = Tensor();
    Result<Tensor> t = Tensor::empty(DType::kBool, std::span<const int64_t>(&n, 1), &cache_);
    if (!t.ok()) return Status::Ok();  // the usual path needs no more memory than it had
    reg_file_ = std::move(t).value();
  }
  uint8_t* next = reg_file_.data_as<uint8_t>();
  const uint8_t* const end = next + registers * kRegisterStride;
  reg_params_.clear();
  for (size_t k = 0; k < n_carried; ++k, next += kRegisterStride) reg_params_.push_back(next);
  uint8_t* const staging = next;
  next += n_carried * kRegisterStride;
  reg_ops_.clear();
  reg_refs_.clear();
  if (!bind_registers(cond, next, end)) return Status::Ok();
  const size_t n_cond = reg_ops_.size();
  const uint8_t* const flag = static_cast<const uint8_t*>(reg_addr_[r]);
  if (flag == nullptr || !bind_registers(body, next, end)) return Status::Ok();
  reg_back_.clear();
  bool reads_carried = false;  // some result is another carried value: copy through staging
  for (size_t k = 0; k < n_carried; ++k) {
    const uint32_t v = bf.results[k];
    const ValueInfo& info = bf.values[v];
    const uint32_t size = uint32_t(cond.slots[cf.params[k]].nbytes());
    const auto* from = static_cast<const uint8_t*>(info.is_constant ? info.constant.data() : reg_addr_[v]);
    if (from == nullptr || (info.is_constant && info.constant.nbytes() != size)) return Status::Ok();
    if (from == reg_params_[k]) continue;  // passed through unchanged
    reads_carried = reads_carried || std::find(reg_params_.begin(), reg_params_.end(), from) != reg_params_.end();
    reg_back_.push_back({from, uint32_t(k), size});
  }

  ran = true;
  ++schedule_counts_.register_loops;
  for (size_t k = 0; k < n_carried; ++k) {
    const Tensor& t = cond.slots[cf.params[k]];
    std::memcpy(reg_params_[k], t.data(), t.nbytes());
  }
  for (uint32_t v : body.plan->held) body.slots[v].reset();  // as an iteration of next_iteration starts
  const kernels::KernelContext& ctx = direct_ctx_;
  kernels::TensorRef* const refs = reg_refs_.data();
  const RegisterOp* const ops = reg_ops_.data();
  const RegisterOp* const ops_end = ops + reg_ops_.size();
  const auto run_ops = [&](const RegisterOp* op, const RegisterOp* e) -> Status {
    for (; op != e; ++op) {
      if (op->fixed != nullptr) {
        op->fixed(op->word, refs + op->ref_begin);
        continue;
      }
      const std::span<const kernels::TensorRef> in(refs + op->ref_begin, op->n_in);
      const std::span<kernels::TensorRef> out(refs + op->ref_begin + op->n_in, op->n_out);
      const Status s = op->prepared != nullptr ? op->prepared->run(ctx, in, out) : op->fn(ctx, *op->attrs, in, out);
      if (!s.ok()) [[unlikely]]
        return at(program_.functions[op->function].nodes[op->node], s.code(), s.message());
    }
    return Status::Ok();
  };
  const RegisterCopy* const back = reg_back_.data();
  const RegisterCopy* const back_end = back + reg_back_.size();
  const NodeInfo& loop_node = program_.functions[frames_[depth_ - 3].fn].nodes[frames_[depth_ - 3].pc];
  while (true) {
    if (should_poll()) [[unlikely]]  // the loop's back-edge
      SG_RETURN_IF_ERROR(check_interrupt(&loop_node));
    SG_RETURN_IF_ERROR(run_ops(ops, ops + n_cond));
    if (*flag == 0) break;
    SG_RETURN_IF_ERROR(run_ops(ops + n_cond, ops_end));
    if (reads_carried) {
      for (const RegisterCopy* c = back; c != back_end; ++c)
        copy_bytes(staging + size_t(c->k) * kRegisterStride, c->from, c->bytes);
      for (const RegisterCopy* c = back; c != back_end; ++c)
        copy_bytes(reg_params_[c->k], staging + size_t(c->k) * kRegisterStride, c->bytes);
    } else {
      for (const RegisterCopy* c = back; c != back_end; ++c) copy_bytes(reg_params_[c->k], c->from, c->bytes);
    }
  }
  // The carried values back into the cond's slots, where the loop's end reads them;
  // a buffer someone else shares (or a constant's) is replaced, never written.
  for (const RegisterCopy& c : reg_back_) {
    Tensor& t = cond.slots[cf.params[c.k]];
    if (!t.unique()) {
      Result<Tensor> fresh = Tensor::empty(t.dtype(), t.shape(), &cache_);
      if (!fresh.ok()) {
        const NodeInfo& node = program_.functions[frames_[depth_ - 3].fn].nodes[frames_[depth_ - 3].pc];
        return at_alloc(node, fresh.status());
      }
      t = std::move(fresh).value();
    }
    std::memcpy(t.data(), reg_params_[c.k], c.bytes);
  }
  cond.pc = uint32_t(cond.plan->steps.size());
  return Status::Ok();
}

}  // namespace sg::runtime
