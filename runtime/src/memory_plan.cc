#include "memory_plan.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "ops/infer.h"
#include "plan_waves.h"

namespace sg::runtime {
namespace {

size_t align_up(size_t n) { return (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment; }

void append_key(std::vector<int64_t>& key, const Tensor& t, bool open) {
  key.push_back(int64_t(t.dtype()));
  key.push_back(t.rank());
  for (int64_t d : t.shape()) key.push_back(open ? -1 : d);
}

bool is_open(const PlanRequest& r, size_t k) { return k < r.open.size() && r.open[k] != 0; }

// The most elements a control-flow result's declared shape may give the plan
// (2^40: beyond any memory; a larger declaration is checked at run time).
constexpr size_t kMaxKnownElements = size_t(1) << 40;

// Bytes of a value of this type, or nullopt when they do not fit a size_t.
std::optional<size_t> byte_size(DType dtype, const PlannedShape& s) {
  size_t n = dtype_size(dtype);
  for (int i = 0; i < s.rank; ++i) {
    const size_t d = size_t(s.dims[i]);
    if (d != 0 && n > (std::numeric_limits<size_t>::max() / 4) / d) return std::nullopt;
    n *= d;
  }
  return n;
}

// The shapes the argument signature decides, node by node.
void infer_shapes(const FunctionImpl& fn, const std::vector<Tensor>& slots, const PlanRequest& request,
                  FramePlan& plan) {
  const size_t n = fn.values.size();
  plan.shape.assign(n, PlannedShape());
  plan.known.assign(n, 0);
  const auto set_known = [&](uint32_t v, std::span<const int64_t> dims) {
    if (dims.size() > size_t(kMaxRank)) return;
    plan.shape[v].rank = int(dims.size());
    std::copy(dims.begin(), dims.end(), plan.shape[v].dims);
    plan.known[v] = 1;
  };
  for (uint32_t v = 0; v < n; ++v)
    if (fn.values[v].is_constant) set_known(v, fn.values[v].dims);
  for (size_t k = 0; k < fn.params.size(); ++k)
    if (!is_open(request, k)) set_known(fn.params[k], slots[fn.params[k]].shape());

  ops::ConcreteInferContext ctx;
  ctx.unknown_scalars = true;
  std::vector<ops::TensorType<int64_t>> in, out;
  std::vector<std::optional<int64_t>> scalars;
  plan.static_node.assign(fn.nodes.size(), 0);
  for (size_t i = 0; i < fn.nodes.size(); ++i) {
    const NodeInfo& node = fn.nodes[i];
    if (node.kind != NodeKind::kOp) {
      // Results of control flow: known now where their declared dims are all
      // static (the executor checks them as they arrive), else when they arrive.
      // A declaration larger than any tensor could be is left to the run, which
      // refuses it: the shape rules below see no more elements than memory holds.
      for (uint32_t v : node.outputs) {
        const std::vector<int64_t>& dims = fn.values[v].dims;
        size_t elements = 1;
        const bool plausible = std::ranges::all_of(dims, [&](int64_t d) {
          return d >= 0 && !__builtin_mul_overflow(elements, size_t(d), &elements) && elements <= kMaxKnownElements;
        });
        if (plausible) set_known(v, dims);
      }
      continue;
    }
    in.assign(node.inputs.size(), {});
    scalars.assign(node.inputs.size(), std::nullopt);
    bool ready = true;
    for (size_t k = 0; k < node.inputs.size() && ready; ++k) {
      const uint32_t v = node.inputs[k];
      const ValueInfo& info = fn.values[v];
      ready = plan.known[v] != 0;
      if (!ready) break;
      in[k].dtype = info.dtype;
      in[k].shape.assign(plan.shape[v].span().begin(), plan.shape[v].span().end());
      if (node.value_dependent_shape && plan.shape[v].rank == 0) {
        // Scalars that may size the output are known now only when they are
        // constants; the rule says whether the shape needs the others.
        if (!info.is_constant) continue;
        if (info.dtype == DType::kI64) scalars[k] = *info.constant.data_as<int64_t>();
        else if (info.dtype == DType::kI32) scalars[k] = *info.constant.data_as<int32_t>();
      }
    }
    if (!ready) continue;
    // A rule that fails or disagrees with the declarations is left to the run,
    // which reports it with the node's location.
    if (!ops::infer<int64_t>(node.op, node.attrs, in, scalars, out, ctx).ok()) continue;
    if (out.size() != node.outputs.size()) continue;
    bool agrees = true;
    for (size_t k = 0; k < out.size() && agrees; ++k) {
      const ValueInfo& declared = fn.values[node.outputs[k]];
      agrees = out[k].dtype == declared.dtype && out[k].rank() == declared.dims.size() &&
               out[k].rank() <= size_t(kMaxRank);
    }
    if (!agrees) continue;
    for (size_t k = 0; k < out.size(); ++k) set_known(node.outputs[k], out[k].shape);
    plan.static_node[i] = 1;
    for (size_t k = 0; k < out.size(); ++k)
      if (!byte_size(out[k].dtype, plan.shape[node.outputs[k]])) plan.static_node[i] = 0;
  }
}

struct Buffer {
  size_t bytes = 0;
  int64_t first = 0, last = 0;  // nodes
  size_t offset = 0;
};

// Places buffers greedily, largest first, each at the lowest offset free for its
// whole lifetime. Returns the arena size.
size_t place(std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed, overlapping;
  size_t arena = 0;
  for (size_t b : order) {
    Buffer& buf = buffers[b];
    overlapping.clear();
    for (size_t p : placed)
      if (buffers[p].first <= buf.last && buf.first <= buffers[p].last) overlapping.push_back(p);
    std::sort(overlapping.begin(), overlapping.end(),
              [&](size_t x, size_t y) { return buffers[x].offset < buffers[y].offset; });
    size_t offset = 0;
    for (size_t p : overlapping) {
      if (buffers[p].offset >= offset + buf.bytes) break;
      offset = std::max(offset, buffers[p].offset + buffers[p].bytes);
    }
    buf.offset = offset;
    arena = std::max(arena, offset + buf.bytes);
    placed.push_back(b);
  }
  return arena;
}

kernels::TensorRef planned_ref(DType dtype, const PlannedShape& s) {
  kernels::TensorRef r;
  r.dtype = dtype;
  r.rank = s.rank;
  std::copy(s.dims, s.dims + s.rank, r.shape);
  return r;
}

// The step of node `i` (its refs, releases and kernel already in the plan).
PlanStep make_step(const FunctionImpl& fn, const NodeKernel& kernel, FramePlan& plan, size_t i) {
  const NodeInfo& node = fn.nodes[i];
  PlanStep step;
  step.release_begin = plan.release_begin[i];
  const uint32_t n_release = plan.release_begin[i + 1] - plan.release_begin[i];
  if (node.kind != NodeKind::kOp) {
    step.mode = StepMode::kControl;
    return step;
  }
  step.mode = StepMode::kGeneral;
  const size_t arity = node.inputs.size() + node.outputs.size();
  if (!plan.static_node[i] || kernel.appends || plan.scratch_bytes[i] != 0 || arity > 0xffff || n_release > 0xffff)
    return step;
  step.fn = kernel.fn;
  step.prepared = kernel.prepared;
  step.attrs = &node.attrs;
  step.ref_begin = plan.ref_begin[i];
  step.release_begin = plan.release_begin[i];
  step.n_release = uint16_t(n_release);
  step.n_in = uint16_t(node.inputs.size());
  step.n_out = uint16_t(node.outputs.size());
  step.bind_begin = uint32_t(plan.binds.size());
  const auto operand = [&](size_t k) { return k < node.inputs.size() ? node.inputs[k] : node.outputs[k - node.inputs.size()]; };
  for (size_t k = 0; k < arity; ++k) {
    const uint32_t v = operand(k);
    if (plan.placement[v] == Placement::kArena) {
      plan.binds.push_back({uint32_t(step.ref_begin + k), v, plan.offset[v]});
      ++step.n_arena;
    }
  }
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const uint32_t v = node.inputs[k];
    if (fn.values[v].is_constant) {
      // Constants stay where the Program mapped them: bound once, here.
      plan.refs[step.ref_begin + k].data = const_cast<void*>(fn.values[v].constant.data());
    } else if (plan.placement[v] != Placement::kArena) {
      plan.binds.push_back({uint32_t(step.ref_begin + k), v, 0});
      ++step.n_slot;
    }
  }
  // An owned output may take over a dying input of its type, decided here once;
  // whether the frame holds that buffer alone is asked at run time.
  std::vector<uint32_t> taken;
  const auto reuse_for = [&](uint32_t v) -> size_t {
    if (!kernel.in_place_safe || !plan.known[v]) return kNoReuse;
    for (uint32_t k = plan.release_begin[i]; k < plan.release_begin[i + 1]; ++k) {
      const uint32_t u = plan.release[k];
      if (std::find(node.inputs.begin(), node.inputs.end(), u) == node.inputs.end() || fn.values[u].is_constant ||
          !plan.known[u] || fn.values[u].dtype != fn.values[v].dtype ||
          !std::ranges::equal(plan.shape[u].span(), plan.shape[v].span()) ||
          std::find(taken.begin(), taken.end(), u) != taken.end())
        continue;
      taken.push_back(u);
      return u;
    }
    return kNoReuse;
  };
  for (size_t k = node.inputs.size(); k < arity; ++k) {
    const uint32_t v = operand(k);
    if (plan.placement[v] != Placement::kArena) {
      plan.binds.push_back({uint32_t(step.ref_begin + k), v, reuse_for(v)});
      ++step.n_owned;
    }
  }
  step.mode = StepMode::kDirect;
  return step;
}

void fill_node_tables(const FunctionImpl& fn, std::span<const NodeKernel> kernels, const std::vector<uint8_t>& is_param,
                      bool borrow, const Waves& waves, FramePlan& plan) {
  const size_t nodes = fn.nodes.size();
  plan.ref_begin.assign(nodes, 0);
  plan.scratch_bytes.assign(nodes, 0);
  plan.release_begin.assign(nodes + 1, 0);
  for (size_t i = 0; i < nodes; ++i) {
    const NodeInfo& node = fn.nodes[i];
    plan.release_begin[i] = uint32_t(plan.release.size());
    for (const auto* list : {&node.release_after, &node.dead_outputs})
      for (uint32_t v : *list)
        if (plan.placement[v] != Placement::kArena && !(borrow && is_param[v])) plan.release.push_back(v);
    if (!plan.static_node[i]) continue;
    plan.ref_begin[i] = uint32_t(plan.refs.size());
    for (uint32_t v : node.inputs) plan.refs.push_back(planned_ref(fn.values[v].dtype, plan.shape[v]));
    for (uint32_t v : node.outputs) plan.refs.push_back(planned_ref(fn.values[v].dtype, plan.shape[v]));
    // Scratch depends on shapes (and for no op on data), so it is fixed here too.
    plan.scratch_bytes[i] = kernels::reference_scratch_size(
        node.op, node.attrs, std::span<const kernels::TensorRef>(&plan.refs[plan.ref_begin[i]], node.inputs.size()));
  }
  plan.release_begin[nodes] = uint32_t(plan.release.size());

  plan.steps.resize(nodes);
  for (size_t i = 0; i < nodes; ++i) plan.steps[i] = make_step(fn, kernels[i], plan, i);
  plan.wave_nodes = waves.nodes;
  plan.waves = waves.spans;
  for (size_t w = 0; w < waves.spans.size(); ++w) {
    const WaveSpan& span = waves.spans[w];
    const uint32_t end = span.begin + span.n_pre + span.n_parallel;
    for (uint32_t m = span.begin; m < end; ++m) plan.steps[waves.nodes[m]].mode = StepMode::kRan;
    PlanStep& lead = plan.steps[waves.nodes[span.begin + span.n_pre]];
    lead.mode = StepMode::kWave;
    lead.wave = uint32_t(w);
  }
  // Outside waves, a kernel's fixed run where it has one for the planned shapes.
  for (size_t i = 0; i < nodes; ++i) {
    PlanStep& step = plan.steps[i];
    if (step.mode != StepMode::kDirect) continue;
    kernels::FixedRun run{kernels[i].scalar_fixed, 0};
    if (step.prepared != nullptr) {
      const kernels::TensorRef* ops = plan.refs.data() + step.ref_begin;
      run = step.prepared->fix(std::span<const kernels::TensorRef>(ops, step.n_in),
                               std::span<const kernels::TensorRef>(ops + step.n_in, step.n_out));
    }
    if (run.fn == nullptr) continue;
    step.mode = StepMode::kFixed;
    step.fixed = run.fn;
    step.word = run.word;
  }
}

}  // namespace

bool plan_matches(const FramePlan& plan, const FunctionImpl& fn, const std::vector<Tensor>& slots, bool borrow) {
  const size_t n = plan.key.size();
  if (n == 0 || plan.key[0] != int64_t(borrow)) return false;
  size_t i = 1;
  for (uint32_t p : fn.params) {
    const Tensor& t = slots[p];
    if (i + 2 > n || plan.key[i] != int64_t(t.dtype()) || plan.key[i + 1] != t.rank()) return false;
    i += 2;
    if (i + size_t(t.rank()) > n) return false;
    for (int d = 0; d < t.rank(); ++d, ++i)
      if (plan.key[i] != t.dim(d) && plan.key[i] != -1) return false;
  }
  return i == n;
}

std::vector<uint8_t> varying_params(const std::vector<std::unique_ptr<FramePlan>>& plans, const FunctionImpl& fn,
                                    const std::vector<Tensor>& slots, bool borrow, size_t threshold) {
  std::vector<uint8_t> open(fn.params.size(), 0);
  size_t similar = 0;
  for (const auto& plan : plans) {
    const std::vector<int64_t>& key = plan->key;
    if (key.empty() || key[0] != int64_t(borrow)) continue;
    // Same dtypes and ranks: the dims that differ vary.
    std::vector<uint8_t> differs(fn.params.size(), 0);
    bool same = true;
    size_t i = 1;
    for (size_t k = 0; k < fn.params.size() && same; ++k) {
      const Tensor& t = slots[fn.params[k]];
      same = i + 2 + size_t(t.rank()) <= key.size() && key[i] == int64_t(t.dtype()) && key[i + 1] == t.rank();
      if (!same) break;
      i += 2;
      for (int d = 0; d < t.rank(); ++d, ++i) differs[k] |= key[i] != t.dim(d);
    }
    if (!same || i != key.size()) continue;
    ++similar;
    for (size_t k = 0; k < open.size(); ++k) open[k] |= differs[k];
  }
  if (similar < threshold) open.clear();
  return open;
}

FramePlan make_plan(const FunctionImpl& fn, std::span<const NodeKernel> kernels, const std::vector<Tensor>& slots,
                    const PlanRequest& request) {
  FramePlan plan;
  plan.key.push_back(int64_t(request.borrow));
  for (size_t k = 0; k < fn.params.size(); ++k) {
    append_key(plan.key, slots[fn.params[k]], is_open(request, k));
    plan.open = plan.open || is_open(request, k);
  }
  infer_shapes(fn, slots, request, plan);

  const size_t n = fn.values.size();
  std::vector<uint8_t> is_param(n, 0);
  for (uint32_t p : fn.params) is_param[p] = 1;
  plan.preserves_key = fn.results.size() == fn.params.size();
  for (size_t k = 0; k < fn.results.size() && plan.preserves_key; ++k) {
    const uint32_t r = fn.results[k], p = fn.params[k];
    plan.preserves_key = plan.known[r] && plan.known[p] && fn.values[r].dtype == slots[p].dtype() &&
                         std::ranges::equal(plan.shape[r].span(), plan.shape[p].span());
  }

  std::vector<int64_t> first(n, -1), last(n, -1);
  std::vector<uint8_t> escapes(n, 0);
  // A borrowing frame's results are read in place: they stay to the end, not escaping.
  if (!request.borrow)
    for (uint32_t r : fn.results) escapes[r] = 1;
  for (size_t i = 0; i < fn.nodes.size(); ++i) {
    const NodeInfo& node = fn.nodes[i];
    for (uint32_t v : node.inputs) {
      last[v] = int64_t(i);
      if (node.kind != NodeKind::kOp) escapes[v] = 1;  // handed to another frame
    }
    for (uint32_t v : node.outputs) first[v] = last[v] = int64_t(i);
  }
  if (request.borrow && !fn.nodes.empty())
    for (uint32_t r : fn.results)
      if (first[r] >= 0) last[r] = int64_t(fn.nodes.size()) - 1;
  // A wave's nodes all run where its first heavy node stands: their outputs live
  // from there, beside each other and beside every input of the wave.
  const Waves waves = find_waves(fn, kernels, plan, request.max_wave);
  std::vector<uint8_t> in_wave(fn.nodes.size(), 0);
  for (const WaveSpan& span : waves.spans) {
    const int64_t at = waves.nodes[span.begin + span.n_pre];
    for (uint32_t m = span.begin; m < span.begin + span.n_pre + span.n_parallel; ++m) {
      const uint32_t i = waves.nodes[m];
      in_wave[i] = 1;
      for (uint32_t v : fn.nodes[i].outputs) first[v] = at;
    }
  }

  plan.placement.assign(n, Placement::kNone);
  plan.offset.assign(n, 0);
  std::vector<int64_t> buffer_of(n, -1);
  std::vector<Buffer> buffers;
  for (size_t i = 0; i < fn.nodes.size(); ++i) {
    const NodeInfo& node = fn.nodes[i];
    for (uint32_t v : node.outputs) {
      const bool arena = node.kind == NodeKind::kOp && plan.static_node[i] && !escapes[v] && !request.general;
      plan.placement[v] = arena ? Placement::kArena : Placement::kOwned;
      if (!arena) continue;
      const size_t bytes = align_up(*byte_size(fn.values[v].dtype, plan.shape[v]));
      // In place: an input of the same type and shape whose last reader is this node.
      // Not for a wave node: it runs early, while other nodes may still read its input.
      if (kernels[i].in_place_safe && !in_wave[i]) {
        for (uint32_t in : node.inputs) {
          const int64_t b = buffer_of[in];
          if (b < 0 || last[in] != int64_t(i) || buffers[size_t(b)].last != int64_t(i)) continue;
          if (fn.values[in].dtype != fn.values[v].dtype || plan.shape[in].rank != plan.shape[v].rank ||
              !std::equal(plan.shape[v].dims, plan.shape[v].dims + plan.shape[v].rank, plan.shape[in].dims))
            continue;
          buffer_of[v] = b;
          buffers[size_t(b)].last = last[v];
          break;
        }
      }
      if (buffer_of[v] < 0) {
        buffer_of[v] = int64_t(buffers.size());
        buffers.push_back({bytes, first[v], last[v], 0});
      }
    }
  }

  // Largest live set: a difference array over the nodes.
  std::vector<int64_t> delta(fn.nodes.size() + 1, 0);
  for (const Buffer& b : buffers) {
    delta[size_t(b.first)] += int64_t(b.bytes);
    delta[size_t(b.last) + 1] -= int64_t(b.bytes);
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    plan.lower_bound_bytes = std::max(plan.lower_bound_bytes, size_t(live));
  }
  plan.arena_bytes = place(buffers);
  for (size_t v = 0; v < n; ++v)
    if (buffer_of[v] >= 0) plan.offset[v] = buffers[size_t(buffer_of[v])].offset;
  fill_node_tables(fn, kernels, is_param, request.borrow, waves, plan);
  if (request.general)
    for (PlanStep& step : plan.steps)
      if (step.mode != StepMode::kControl) step.mode = StepMode::kGeneral;
  for (uint32_t v = 0; v < n; ++v)
    if (is_param[v] || plan.placement[v] == Placement::kOwned) plan.held.push_back(v);
  return plan;
}

}  // namespace sg::runtime
