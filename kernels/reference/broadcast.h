// NumPy broadcasting as rows: the output (dense, C-order) is walked as a set of
// rows of its innermost (coalesced) dimension, and for each row every operand
// gives its start offset and a step of 0 (broadcast) or 1. Equal shapes and
// scalar operands coalesce to a single row, so the kernels' inner loops see the
// fast cases without special-casing them.
#pragma once

#include <array>
#include <cstdint>

#include "interface/kernel.h"

namespace sg::kernels {

template <int N>
struct BroadcastPlan {
  int rank = 0;  // after dropping size-1 dims and coalescing
  int64_t shape[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};  // element strides of each operand, 0 where broadcast
  int64_t numel = 0;
};

// Builds the plan for broadcasting `ins` to `out_shape`. Returns false when an
// operand cannot be broadcast to it (the shape rules make this a broken invariant).
template <int N>
bool make_broadcast_plan(const TensorRef& out, const std::array<const TensorRef*, N>& ins,
                         BroadcastPlan<N>& plan) {
  const int rank = out.rank;
  plan = BroadcastPlan<N>();
  plan.numel = out.numel();
  // Operands of the output's own shape (scalars, loop counters, most elementwise
  // chains) are one dense row: skip the per-dim walk.
  bool same = true;
  for (int k = 0; k < N && same; ++k) {
    const TensorRef& in = *ins[k];
    same = in.rank == rank;
    for (int d = 0; d < rank && same; ++d) same = in.shape[d] == out.shape[d];
  }
  if (same) {
    if (plan.numel > 1) {
      plan.rank = 1;
      plan.shape[0] = plan.numel;
      for (int k = 0; k < N; ++k) plan.strides[k][0] = 1;
    }
    return true;
  }
  int64_t strides[N][kMaxRank];
  for (int k = 0; k < N; ++k) {
    const TensorRef& in = *ins[k];
    if (in.rank > rank) return false;
    const int lead = rank - in.rank;
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t dim = d >= lead ? in.shape[d - lead] : 1;
      if (dim == out.shape[d]) {
        strides[k][d] = dim == 1 ? 0 : s;
      } else if (dim == 1) {
        strides[k][d] = 0;
      } else {
        return false;
      }
      s *= dim;
    }
  }
  // Drop size-1 output dims, then merge neighbours that every operand walks as one.
  for (int d = 0; d < rank; ++d) {
    if (out.shape[d] == 1) continue;
    const int r = plan.rank;
    bool merge = r > 0;
    for (int k = 0; k < N && merge; ++k)
      merge = strides[k][d] == 0 ? plan.strides[k][r - 1] == 0
                                 : plan.strides[k][r - 1] == strides[k][d] * out.shape[d];
    if (merge) {
      plan.shape[r - 1] *= out.shape[d];
      for (int k = 0; k < N; ++k) plan.strides[k][r - 1] = strides[k][d];
    } else {
      plan.shape[r] = out.shape[d];
      for (int k = 0; k < N; ++k) plan.strides[k][r] = strides[k][d];
      ++plan.rank;
    }
  }
  return true;
}

// Calls f(out_offset, in_offsets[N], n, in_steps[N]) for every output row of n
// elements; in_steps[k] is 0 or 1.
template <int N, class F>
void for_each_broadcast_row(const BroadcastPlan<N>& p, F&& f) {
  if (p.numel == 0) return;
  int64_t off[N] = {};
  int64_t step[N];
  if (p.rank == 0) {
    for (int k = 0; k < N; ++k) step[k] = 0;
    f(int64_t(0), off, int64_t(1), step);
    return;
  }
  const int last = p.rank - 1;
  const int64_t n = p.shape[last];
  for (int k = 0; k < N; ++k) step[k] = p.strides[k][last];
  int64_t idx[kMaxRank] = {};
  int64_t out_off = 0;
  const int64_t rows = p.numel / n;
  for (int64_t row = 0; row < rows; ++row) {
    f(out_off, off, n, step);
    out_off += n;
    // Odometer over the outer dims.
    for (int d = last - 1; d >= 0; --d) {
      for (int k = 0; k < N; ++k) off[k] += p.strides[k][d];
      if (++idx[d] < p.shape[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= p.strides[k][d] * p.shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace sg::kernels
