#include "plan_waves.h"

#include <algorithm>

namespace sg::runtime {
namespace {

double numel(const PlannedShape& s) {
  double n = 1;
  for (int i = 0; i < s.rank; ++i) n *= double(s.dims[i]);
  return n;
}

// Whether node `i` may run inside a wave (hoisted or concurrently).
bool movable(const FunctionImpl& fn, std::span<const NodeKernel> kernels, const FramePlan& plan, size_t i) {
  const NodeInfo& node = fn.nodes[i];
  if (node.kind != NodeKind::kOp || !plan.static_node[i] || ops::has_flag(node.op, ops::kSideEffect)) return false;
  const NodeKernel& kernel = kernels[i];
  if (kernel.appends || (kernel.fn == nullptr && kernel.prepared == nullptr)) return false;
  // The step's counters are 16 bits wide.
  if (node.inputs.size() + node.outputs.size() > 0xffff || node.release_after.size() + node.dead_outputs.size() > 0xffff)
    return false;
  std::vector<kernels::TensorRef> in(node.inputs.size());
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const PlannedShape& s = plan.shape[node.inputs[k]];
    in[k].dtype = fn.values[node.inputs[k]].dtype;
    in[k].rank = s.rank;
    std::copy(s.dims, s.dims + s.rank, in[k].shape);
  }
  // Scratch is one buffer per Session: a wave node cannot share it.
  return kernels::reference_scratch_size(node.op, node.attrs, in) == 0;
}

}  // namespace

uint64_t estimated_work(const FunctionImpl& fn, const FramePlan& plan, size_t i) {
  const NodeInfo& node = fn.nodes[i];
  double out = 0;
  for (uint32_t v : node.outputs) out += numel(plan.shape[v]);
  double work = 0;
  switch (node.op) {
    case ops::OpId::MatMul:
    case ops::OpId::FullyConnected: {
      // Two FLOPs per output element per step of the contracted dim, the last of
      // the first operand in both.
      const PlannedShape& a = plan.shape[node.inputs[0]];
      work = 2 * out * (a.rank > 0 ? double(a.dims[a.rank - 1]) : 1);
      break;
    }
    case ops::OpId::Conv2D:
    case ops::OpId::Conv2DBias: {
      // Per output element, one multiply-add per filter element of its channel.
      const PlannedShape& o = plan.shape[node.outputs[0]];
      const double channels = o.rank > 0 ? double(o.dims[o.rank - 1]) : 0;
      if (channels > 0) work = 2 * out * numel(plan.shape[node.inputs[1]]) / channels;
      break;
    }
    default:
      work = out;
      for (uint32_t v : node.inputs) work += numel(plan.shape[v]);
  }
  return work >= 1.8e19 ? UINT64_MAX : uint64_t(work);
}

Waves find_waves(const FunctionImpl& fn, std::span<const NodeKernel> kernels, const FramePlan& plan, int max_wave) {
  Waves waves;
  if (max_wave < 2) return waves;
  const size_t n = fn.nodes.size();
  std::vector<int64_t> made_at(fn.values.size(), -1);  // the node making each value
  for (size_t i = 0; i < n; ++i)
    for (uint32_t v : fn.nodes[i].outputs) made_at[v] = int64_t(i);
  std::vector<uint8_t> can_move(n, 0), heavy(n, 0);
  for (size_t i = 0; i < n; ++i) {
    can_move[i] = movable(fn, kernels, plan, i);
    heavy[i] = can_move[i] && estimated_work(fn, plan, i) >= kWaveMinWork;
  }

  std::vector<uint32_t> wave, pre, hoist;
  int64_t start = -1;  // where the open wave runs
  // A light node made at `k` may be hoisted to `start` when all it reads is made before.
  const auto hoistable = [&](int64_t k) {
    if (k <= start || heavy[size_t(k)] || !can_move[size_t(k)]) return false;
    const std::vector<uint32_t>& in = fn.nodes[size_t(k)].inputs;
    return std::all_of(in.begin(), in.end(), [&](uint32_t v) { return made_at[v] < start; });
  };
  const auto close = [&] {
    if (wave.size() >= 2) {
      std::sort(pre.begin(), pre.end());
      waves.spans.push_back({uint32_t(waves.nodes.size()), uint16_t(pre.size()), uint16_t(wave.size())});
      waves.nodes.insert(waves.nodes.end(), pre.begin(), pre.end());
      waves.nodes.insert(waves.nodes.end(), wave.begin(), wave.end());
    }
    wave.clear();
    pre.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    const NodeInfo& node = fn.nodes[i];
    if (node.kind != NodeKind::kOp || ops::has_flag(node.op, ops::kSideEffect)) {
      close();  // nothing moves across control flow or an effect
      continue;
    }
    if (!heavy[i]) continue;  // stays where it is, unless a later heavy node hoists it
    bool joins = !wave.empty() && wave.size() < size_t(max_wave) && pre.size() + node.inputs.size() < 0xffff;
    hoist.clear();
    for (size_t k = 0; k < node.inputs.size() && joins; ++k) {
      const int64_t at = made_at[node.inputs[k]];
      if (at < start) continue;
      joins = hoistable(at);
      if (joins && std::find(pre.begin(), pre.end(), uint32_t(at)) == pre.end() &&
          std::find(hoist.begin(), hoist.end(), uint32_t(at)) == hoist.end())
        hoist.push_back(uint32_t(at));
    }
    if (joins) {
      pre.insert(pre.end(), hoist.begin(), hoist.end());
    } else {
      close();
      start = int64_t(i);
    }
    wave.push_back(uint32_t(i));
  }
  close();
  return waves;
}

}  // namespace sg::runtime
