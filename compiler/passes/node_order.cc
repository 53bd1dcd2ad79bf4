// Node order for a lower activation peak: a greedy list scheduler that, among the
// nodes whose inputs are ready, runs the one that adds the fewest live bytes
// (its outputs' bytes minus the bytes of inputs it is the last reader of), ties
// going to program order. Sizes are the values' static bytes, a symbolic dim
// counting as 1 (dims of one entry usually scale every activation alike).
//
// Effects keep their place exactly: a node with an effect (print, assert, or a
// call of a function that has one) is a barrier that no node crosses, so what a
// program prints, and which error stops it first, stay as in program order; the
// nodes between two barriers are reordered among themselves. Constants and
// parameters are not counted: the frame does not make them.
//
// The new order is kept only where it lowers the modelled peak, so a function
// that is already good keeps its program order.
#include <algorithm>
#include <limits>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

constexpr int32_t kNoProducer = -1;
constexpr int64_t kMaxValueBytes = int64_t(1) << 40;

struct Liveness {
  std::vector<int64_t> bytes;        // per value: 0 for constants and parameters
  std::vector<int32_t> uses;         // node inputs still to run, per value
  std::vector<uint8_t> is_result;    // never freed inside the function
};

Liveness liveness_of(const ir::Function& f) {
  Liveness l;
  l.bytes.assign(f.values.size(), 0);
  for (const ir::Node& n : f.nodes)
    for (int32_t v : n.outputs) l.bytes[size_t(v)] = value_bytes(f.values[size_t(v)].type);
  l.uses.assign(f.values.size(), 0);
  for (const ir::Node& n : f.nodes)
    for (int32_t v : n.inputs) ++l.uses[size_t(v)];
  l.is_result.assign(f.values.size(), 0);
  for (int32_t v : f.results) l.is_result[size_t(v)] = 1;
  return l;
}

// The change in live bytes when node n runs next: its outputs appear, and the
// inputs (and dead outputs) it is the last reader of go away.
int64_t delta_of(const ir::Node& n, const Liveness& l) {
  int64_t d = 0;
  for (int32_t v : n.outputs) {
    d += l.bytes[size_t(v)];
    if (l.uses[size_t(v)] == 0 && !l.is_result[size_t(v)]) d -= l.bytes[size_t(v)];
  }
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int32_t v = n.inputs[k];
    if (l.is_result[size_t(v)] || l.bytes[size_t(v)] == 0) continue;
    if (std::find(n.inputs.begin(), n.inputs.begin() + long(k), v) != n.inputs.begin() + long(k)) continue;
    const int32_t here = int32_t(std::count(n.inputs.begin(), n.inputs.end(), v));
    if (l.uses[size_t(v)] == here) d -= l.bytes[size_t(v)];
  }
  return d;
}

// Runs node n in the model: its outputs become live, its last uses die. Returns
// the live bytes while it runs (inputs and outputs together).
int64_t retire(const ir::Node& n, Liveness& l, int64_t& live) {
  for (int32_t v : n.outputs) live += l.bytes[size_t(v)];
  const int64_t during = live;
  for (int32_t v : n.inputs) {
    --l.uses[size_t(v)];
    if (l.uses[size_t(v)] == 0 && !l.is_result[size_t(v)]) live -= l.bytes[size_t(v)];
  }
  for (int32_t v : n.outputs)
    if (l.uses[size_t(v)] == 0 && !l.is_result[size_t(v)]) live -= l.bytes[size_t(v)];
  return during;
}

// The greedy order of nodes [begin, end) of f, all nodes before `begin` having run.
void schedule_segment(const ir::Function& f, size_t begin, size_t end, const std::vector<int32_t>& producer,
                      Liveness& l, int64_t& live, std::vector<size_t>& order) {
  std::vector<int32_t> waiting(end - begin, 0);  // inputs whose producer in the segment has not run
  std::vector<std::vector<size_t>> readers(end - begin);
  for (size_t i = begin; i < end; ++i)
    for (int32_t v : f.nodes[i].inputs) {
      const int32_t p = producer[size_t(v)];
      if (p == kNoProducer || size_t(p) < begin) continue;
      ++waiting[i - begin];
      readers[size_t(p) - begin].push_back(i);
    }
  std::vector<size_t> ready;
  for (size_t i = begin; i < end; ++i)
    if (waiting[i - begin] == 0) ready.push_back(i);
  while (!ready.empty()) {
    size_t best = 0;
    int64_t best_delta = std::numeric_limits<int64_t>::max();
    for (size_t r = 0; r < ready.size(); ++r) {
      const int64_t d = delta_of(f.nodes[ready[r]], l);
      if (d < best_delta || (d == best_delta && ready[r] < ready[best])) best = r, best_delta = d;
    }
    const size_t node = ready[best];
    ready.erase(ready.begin() + long(best));
    retire(f.nodes[node], l, live);
    order.push_back(node);
    for (size_t reader : readers[node - begin])
      if (--waiting[reader - begin] == 0) ready.push_back(reader);
  }
}

bool order_function(ir::Function& f, const std::vector<bool>& effects) {
  if (f.nodes.size() < 3) return false;
  std::vector<int32_t> producer(f.values.size(), kNoProducer);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    for (int32_t v : f.nodes[i].outputs) producer[size_t(v)] = int32_t(i);

  Liveness l = liveness_of(f);
  int64_t live = 0;
  std::vector<size_t> order;
  order.reserve(f.nodes.size());
  size_t begin = 0;
  for (size_t i = 0; i <= f.nodes.size(); ++i) {
    if (i < f.nodes.size() && !node_has_effect(f.nodes[i], effects)) continue;
    schedule_segment(f, begin, i, producer, l, live, order);
    if (i < f.nodes.size()) {
      retire(f.nodes[i], l, live);
      order.push_back(i);
    }
    begin = i + 1;
  }
  bool moved = false;
  for (size_t i = 0; i < order.size(); ++i) moved |= order[i] != i;
  if (!moved) return false;

  std::vector<ir::Node> reordered;
  reordered.reserve(f.nodes.size());
  for (size_t i : order) reordered.push_back(f.nodes[i]);
  const int64_t before = peak_live_bytes(f);
  std::swap(f.nodes, reordered);
  if (peak_live_bytes(f) < before) return true;
  std::swap(f.nodes, reordered);  // no better: keep program order
  return false;
}

}  // namespace

int64_t value_bytes(const ir::Type& t) {
  int64_t n = int64_t(dtype_size(t.dtype));
  for (const ir::Dim& d : t.shape) {
    const std::optional<int64_t> v = d.as_static();
    // A symbolic dim counts as 1; a huge static shape saturates (at 1 TiB, far
    // beyond any real activation) so that sums of sizes cannot overflow.
    const int64_t k = v ? std::max<int64_t>(*v, 0) : 1;
    n = k != 0 && n > kMaxValueBytes / k ? kMaxValueBytes : n * k;
  }
  return n;
}

int64_t peak_live_bytes(const ir::Function& f) {
  Liveness l = liveness_of(f);
  int64_t live = 0, peak = 0;
  for (const ir::Node& n : f.nodes) peak = std::max(peak, retire(n, l, live));
  return peak;
}

bool order_nodes_for_memory(ir::Module& m) {
  const std::vector<bool> effects = functions_with_effects(m);
  bool changed = false;
  for (ir::Function& f : m.functions) changed |= order_function(f, effects);
  return changed;
}

}  // namespace sg::compiler::passes
