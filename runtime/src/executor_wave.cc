// Running a wave (plan_waves.h): its hoisted light nodes, then its independent
// heavy nodes as tasks on the Session's threads (its pool or team). Everything
// that touches the frame, the buffer cache or a reference count (binding operands,
// making owned outputs, errors, releases) happens on the calling thread before or
// after the tasks; a task only calls its node's kernel, on refs no other task
// reads or writes. Kernels get no pool or team inside a wave: neither is
// re-entrant, and the wave already keeps every thread busy.
#ifdef SG_HAVE_XNNPACK
#include "xnnpack/xnnpack_backend.h"
#endif

#include "executor.h"
#include "executor_detail.h"

namespace sg::runtime {

using detail::at_alloc;
using detail::now_ns;

namespace {

struct WaveTask {
  FramePlan* plan;
  const uint32_t* nodes;
  Status* status;
  uint64_t* ns;
  const std::atomic<uint32_t>* interrupt;
  bool profile;
};

void run_wave_node(void* arg, size_t k) {
  const WaveTask& task = *static_cast<const WaveTask*>(arg);
  const PlanStep& step = task.plan->steps[task.nodes[k]];
  kernels::TensorRef* const ops = task.plan->refs.data() + step.ref_begin;
  kernels::KernelContext ctx;  // no thread pool, no scratch (waves take no node that needs it)
  ctx.interrupt = task.interrupt;
  const std::span<const kernels::TensorRef> in(ops, step.n_in);
  const std::span<kernels::TensorRef> out(ops + step.n_in, step.n_out);
  const uint64_t start = task.profile ? now_ns() : 0;
  task.status[k] = step.prepared != nullptr ? step.prepared->run(ctx, in, out) : step.fn(ctx, *step.attrs, in, out);
  if (task.profile) task.ns[k] = now_ns() - start;
}

}  // namespace

Status Executor::run_wave(Frame& frame, const PlanStep& lead) {
  FramePlan& plan = *frame.plan;
  const FunctionImpl& fn = program_.functions[frame.fn];
  const WaveSpan& span = plan.waves[lead.wave];
  const uint32_t* const pre = plan.wave_nodes.data() + span.begin;
  const uint32_t* const nodes = pre + span.n_pre;
  const size_t size = span.n_parallel;
  kernels::TensorRef* const refs = plan.refs.data();
  for (const uint32_t* i = pre; i != nodes + size; ++i) {
    const PlanStep& step = plan.steps[*i];
    const OperandBind* b = plan.binds.data() + step.bind_begin;
    for (const OperandBind* e = b + step.n_arena; b != e; ++b) refs[b->ref].data = frame.arena + b->offset;
    for (const OperandBind* e = b + step.n_slot; b != e; ++b)
      refs[b->ref].data = const_cast<void*>(frame.slots[b->value].data());
    for (const OperandBind* e = b + step.n_owned; b != e; ++b) {
      // A buffer of its own: writing over a dying input, as a direct node may, is
      // unsafe here, where nodes before this one's place may still read that input.
      kernels::TensorRef& r = refs[b->ref];
      Result<Tensor> t = Tensor::empty(r.dtype, std::span<const int64_t>(r.shape, size_t(r.rank)), &cache_);
      if (!t.ok()) return at_alloc(fn.nodes[*i], t.status());
      frame.slots[b->value] = std::move(t).value();
      r.data = frame.slots[b->value].data();
    }
  }
  // The hoisted light nodes, one after another, each kernel on all threads.
  for (const uint32_t* i = pre; i != nodes; ++i) {
    const PlanStep& step = plan.steps[*i];
    kernels::TensorRef* const ops = refs + step.ref_begin;
    const std::span<const kernels::TensorRef> in(ops, step.n_in);
    const std::span<kernels::TensorRef> out(ops + step.n_in, step.n_out);
    const uint64_t start = profile_ ? now_ns() : 0;
    const Status ran = step.prepared != nullptr ? step.prepared->run(direct_ctx_, in, out)
                                                : step.fn(direct_ctx_, *step.attrs, in, out);
    if (profile_) record(frame, *i, start);
    if (!ran.ok()) return kernel_failed(fn.nodes[*i], ran);
  }
  WaveTask task{&plan, nodes, wave_status_.data(), wave_ns_.data(), &interrupt_, profile_};
#ifdef SG_HAVE_XNNPACK
  kernels::parallelize(direct_ctx_, run_wave_node, &task, size);
#else
  for (size_t k = 0; k < size; ++k) run_wave_node(&task, k);  // no pool in this build: waves never form
#endif
  ++schedule_counts_.waves;
  schedule_counts_.wave_nodes += size;
  // The first failing node of the wave in program order, as a sequential run reports.
  for (size_t k = 0; k < size; ++k) {
    const Status& ran = wave_status_[k];
    if (!ran.ok()) return kernel_failed(fn.nodes[nodes[k]], ran);
  }
  if (profile_)
    for (size_t k = 0; k < size; ++k) {
      NodeStats& st = stats_[frame.fn][nodes[k]];
      ++st.calls;
      st.total_ns += wave_ns_[k];
    }
  return Status::Ok();
}

}  // namespace sg::runtime
