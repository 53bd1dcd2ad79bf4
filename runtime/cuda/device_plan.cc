#include "device_plan.h"

#include <algorithm>

namespace sg::runtime {

std::vector<NodeKernel> device_plan_kernels(const FunctionImpl& fn) {
  std::vector<NodeKernel> table(fn.nodes.size());
  for (size_t n = 0; n < fn.nodes.size(); ++n) {
    const NodeInfo& node = fn.nodes[n];
    if (node.kind != NodeKind::kOp) continue;
    table[n].fn = node.kernel;
    table[n].in_place_safe = ops::has_flag(node.op, ops::kElementwiseBinary) ||
                             ops::has_flag(node.op, ops::kElementwiseUnary) || node.op == ops::OpId::Where ||
                             node.op == ops::OpId::ElementwiseChain;
  }
  return table;
}

FramePlan plan_device_frame(const FunctionImpl& fn, std::span<const NodeKernel> kernels,
                            std::span<const Tensor> params) {
  std::vector<Tensor> slots(fn.values.size());
  for (size_t k = 0; k < fn.params.size() && k < params.size(); ++k)
    slots[fn.params[k]] = Tensor::wrap(params[k].dtype(), params[k].shape(), nullptr);
  return make_plan(fn, kernels, slots);
}

DevicePlanCache::Entry& DevicePlanCache::find(const FunctionImpl& fn, std::span<const NodeKernel> kernels,
                                              std::span<const Tensor> params) {
  slots_.assign(fn.values.size(), Tensor());
  for (size_t k = 0; k < fn.params.size() && k < params.size(); ++k)
    slots_[fn.params[k]] = Tensor::wrap(params[k].dtype(), params[k].shape(), nullptr);
  for (const auto& e : entries_)
    if (plan_matches(e->plan, fn, slots_, false)) return *e;
  if (entries_.size() >= kMaxPlans) {
    const auto idle = std::find_if(entries_.begin(), entries_.end(), [](const auto& e) { return e->active == 0; });
    if (idle != entries_.end()) {
      for (void* a : (*idle)->arenas) free_(user_, a);
      entries_.erase(idle);
    }
  }
  auto e = std::make_unique<Entry>();
  e->plan = make_plan(fn, kernels, slots_);
  entries_.push_back(std::move(e));
  return *entries_.back();
}

Result<uint8_t*> DevicePlanCache::acquire(Entry& e) {
  if (size_t(e.active) < e.arenas.size()) return static_cast<uint8_t*>(e.arenas[size_t(e.active++)]);
  void* arena = nullptr;
  if (e.plan.arena_bytes > 0) {
    Result<void*> got = allocate_(user_, e.plan.arena_bytes);
    if (!got.ok()) return got.status();
    arena = *got;
    ++allocations_;
  }
  e.arenas.push_back(arena);
  ++e.active;
  return static_cast<uint8_t*>(arena);
}

void DevicePlanCache::clear() {
  for (const auto& e : entries_)
    for (void* a : e->arenas)
      if (a != nullptr) free_(user_, a);
  entries_.clear();
}

size_t DevicePlanCache::arena_bytes() const {
  size_t total = 0;
  for (const auto& e : entries_) total += e->plan.arena_bytes * e->arenas.size();
  return total;
}

size_t DevicePlanCache::lower_bound_bytes() const {
  size_t total = 0;
  for (const auto& e : entries_) total += e->plan.lower_bound_bytes * e->arenas.size();
  return total;
}

}  // namespace sg::runtime
