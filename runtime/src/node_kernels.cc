#include "node_kernels.h"

#include "custom_op_kernel.h"

#include <algorithm>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#ifdef SG_HAVE_XNNPACK
#include "xnnpack/xnnpack_backend.h"
#endif

namespace sg::runtime {
namespace {

bool elementwise(ops::OpId op) {
  return ops::has_flag(op, ops::kElementwiseUnary) || ops::has_flag(op, ops::kElementwiseBinary);
}

// An elementwise binary node whose operands are all declared rank 0 (counters,
// tests): its scalar kernel and fixed run into `k`, where it is one.
void scalar_kernel(const FunctionImpl& fn, const NodeInfo& node, NodeKernel& k) {
  if (!ops::has_flag(node.op, ops::kElementwiseBinary) || node.inputs.size() != 2 || node.outputs.size() != 1)
    return;
  for (uint32_t v : {node.inputs[0], node.inputs[1], node.outputs[0]})
    if (!fn.values[v].dims.empty()) return;
  const DType in = fn.values[node.inputs[0]].dtype, out = fn.values[node.outputs[0]].dtype;
  if (fn.values[node.inputs[1]].dtype != in) return;
  const kernels::KernelFn one = kernels::scalar_binary_kernel(node.op, in, out);
  if (one == nullptr) return;
  k.fn = one;
  k.scalar = true;
  k.scalar_fixed = kernels::scalar_binary_fixed(node.op, in, out);
}

bool appends(const FunctionImpl& fn, const NodeInfo& node) {
  if (node.op != ops::OpId::Concatenate || node.inputs.size() < 2 || node.outputs.size() != 1 ||
      node.attrs.values.empty() || node.attrs.i(ops::attr::kAxisValue) != 0)
    return false;
  const uint32_t base = node.inputs[0];
  const auto& in = node.inputs;
  // The list is a parameter, or what a Call, If or While handed back (a tape a
  // recursive function's forward threads through its calls): values the frame
  // holds by themselves, never in its arena.
  bool held = std::find(fn.params.begin(), fn.params.end(), base) != fn.params.end();
  for (const NodeInfo& other : fn.nodes) {
    const auto& out = other.outputs;
    if (other.kind != NodeKind::kOp && std::find(out.begin(), out.end(), base) != out.end()) held = true;
  }
  return held &&
         std::find(node.release_after.begin(), node.release_after.end(), base) != node.release_after.end() &&
         std::find(in.begin() + 1, in.end(), base) == in.end();
}

#ifdef SG_HAVE_XNNPACK
std::unique_ptr<kernels::PreparedKernel> prepare(const FunctionImpl& fn, const NodeInfo& node) {
  std::vector<kernels::InputInfo> inputs(node.inputs.size());
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const ValueInfo& v = fn.values[node.inputs[k]];
    kernels::InputInfo& info = inputs[k];
    info.dtype = v.dtype;
    info.rank = int(v.dims.size());
    for (size_t d = 0; d < v.dims.size() && d < size_t(kernels::kMaxRank); ++d) info.shape[d] = v.dims[d];
    info.constant = v.is_constant ? v.constant.data() : nullptr;
  }
  return kernels::xnnpack_prepare(node.op, node.attrs, inputs);
}
#endif

}  // namespace

int usable_threads(int asked) {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return std::min(asked, CPU_COUNT(&set));
#endif
  const unsigned cpus = std::thread::hardware_concurrency();
  return cpus > 0 && cpus < unsigned(asked) ? int(cpus) : asked;
}

NodeKernels::NodeKernels(const ProgramImpl& program, int num_threads, void* shared_pool, int shared_threads,
                         const CustomOps* custom_ops) {
  table_.resize(program.functions.size());
  for (size_t f = 0; f < program.functions.size(); ++f) {
    const FunctionImpl& fn = program.functions[f];
    table_[f].resize(fn.nodes.size());
    for (size_t n = 0; n < fn.nodes.size(); ++n) {
      const NodeInfo& node = fn.nodes[n];
      if (node.kind != NodeKind::kOp) continue;
      NodeKernel& k = table_[f][n];
      k.fn = node.kernel;
      if (node.op == ops::OpId::Custom) {
        if (std::unique_ptr<kernels::PreparedKernel> p = custom_kernel(custom_ops, node.attrs)) {
          k.prepared = p.get();
          prepared_.push_back(std::move(p));
        }
        continue;
      }
      scalar_kernel(fn, node, k);
      std::vector<const QuantizedConstant*> quant;
      for (uint32_t v : node.inputs) quant.push_back(fn.values[v].quant.get());
      if (std::unique_ptr<kernels::PreparedKernel> q = quantized_kernel(node.op, node.attrs, quant, program.dynamic_quantization)) {
        // A constant read in place, quantized (SPEC §13).
        k.prepared = q.get();
        prepared_.push_back(std::move(q));
      }
#ifdef SG_HAVE_XNNPACK
      if (k.scalar || k.prepared != nullptr) {
        // One element: nothing for a backend to do faster.
      } else if (std::unique_ptr<kernels::PreparedKernel> p = prepare(fn, node)) {
        k.prepared = p.get();
        prepared_.push_back(std::move(p));
      }
#endif
      // Some prepared kernels recompute from their inputs after writing the output
      // (NaN handling); only those that say otherwise run in place.
      k.in_place_safe = (k.prepared == nullptr || k.prepared->runs_in_place()) && elementwise(node.op);
      k.appends = appends(fn, node);
    }
  }
#ifdef SG_HAVE_XNNPACK
  if (shared_pool != nullptr) {
    // A pool other Sessions use too: never a team, whose helpers spin for one caller.
    threadpool_ = shared_pool;
    num_threads_ = shared_threads;
    return;
  }
  // Threads: a team when every kernel can split over one (their hand-off is the
  // cheaper), else a pool, which XNNPACK's operators need.
  num_threads = usable_threads(num_threads);
  const auto needs_pool = [](const auto& p) { return p->needs_pool(); };
  if (num_threads > 1 && std::none_of(prepared_.begin(), prepared_.end(), needs_pool))
    team_ = SpinTeam::create(size_t(num_threads));
  if (team_ != nullptr) {
    num_threads_ = num_threads;
  } else {
    threadpool_ = kernels::xnnpack_create_threadpool(num_threads);
    owns_pool_ = threadpool_ != nullptr;
    if (threadpool_ != nullptr) num_threads_ = num_threads;
  }
#else
  (void)num_threads;
  (void)shared_pool;
  (void)shared_threads;
#endif
}

NodeKernels::~NodeKernels() {
  prepared_.clear();  // before the pool they may run on
  team_.reset();
#ifdef SG_HAVE_XNNPACK
  if (owns_pool_) kernels::xnnpack_destroy_threadpool(threadpool_);
#endif
}

const char* NodeKernels::name(uint32_t fn, uint32_t node) const {
  const NodeKernel& k = table_[fn][node];
  if (k.prepared != nullptr) return k.prepared->name();
  if (k.fn == nullptr) return "control-flow";
  return k.scalar ? "reference:scalar" : "reference";
}

size_t NodeKernels::memory_bytes() const {
  size_t n = 0;
  for (const auto& p : prepared_) n += p->memory_bytes();
  return n;
}

}  // namespace sg::runtime
