// Walks a reduction: the input's dims are split into kept dims (the output's, in
// order) and reduced dims, size-1 dims dropped and neighbours of the same kind
// merged. Every output element is then a strided walk over the reduced dims.
#pragma once

#include <cstdint>
#include <span>

#include "interface/kernel.h"

namespace sg::kernels {

struct ReductionPlan {
  int kept_rank = 0;
  int64_t kept_shape[kMaxRank] = {};
  int64_t kept_stride[kMaxRank] = {};
  int red_rank = 0;
  int64_t red_shape[kMaxRank] = {};
  int64_t red_stride[kMaxRank] = {};
  int64_t out_numel = 1;  // product of the kept dims
  int64_t count = 1;      // elements reduced into each output element
};

// `reduced[d]` says whether input dim d is reduced.
inline ReductionPlan make_reduction_plan(const TensorRef& in, const bool* reduced) {
  ReductionPlan p;
  int64_t strides[kMaxRank];
  int64_t s = 1;
  for (int d = in.rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= in.shape[d];
  }
  int last_kind = -1;  // 0 kept, 1 reduced
  for (int d = 0; d < in.rank; ++d) {
    const int64_t n = in.shape[d];
    if (reduced[d]) p.count *= n;
    else p.out_numel *= n;
    if (n == 1) continue;
    const int kind = reduced[d] ? 1 : 0;
    int& rank = kind ? p.red_rank : p.kept_rank;
    int64_t* shape = kind ? p.red_shape : p.kept_shape;
    int64_t* stride = kind ? p.red_stride : p.kept_stride;
    if (kind == last_kind) {  // contiguous with the previous dim of this kind
      shape[rank - 1] *= n;
      stride[rank - 1] = strides[d];
    } else {
      shape[rank] = n;
      stride[rank] = strides[d];
      ++rank;
    }
    last_kind = kind;
  }
  return p;
}

// Calls f(out_index, in_offset) for every output element, in output order.
template <class F>
void for_each_kept(const ReductionPlan& p, F&& f) {
  if (p.out_numel == 0) return;
  int64_t idx[kMaxRank] = {};
  int64_t off = 0;
  for (int64_t o = 0; o < p.out_numel; ++o) {
    f(o, off);
    for (int d = p.kept_rank - 1; d >= 0; --d) {
      off += p.kept_stride[d];
      if (++idx[d] < p.kept_shape[d]) break;
      off -= p.kept_stride[d] * p.kept_shape[d];
      idx[d] = 0;
    }
  }
}

// Calls g(in_offset) for every reduced element of the output element at `base`.
template <class G>
void for_each_reduced(const ReductionPlan& p, int64_t base, G&& g) {
  if (p.count == 0) return;
  if (p.red_rank == 0) {
    g(base);
    return;
  }
  const int last = p.red_rank - 1;
  const int64_t n = p.red_shape[last], step = p.red_stride[last];
  int64_t idx[kMaxRank] = {};
  int64_t off = base;
  for (int64_t row = 0, rows = p.count / n; row < rows; ++row) {
    for (int64_t j = 0; j < n; ++j) g(off + j * step);
    for (int d = last - 1; d >= 0; --d) {
      off += p.red_stride[d];
      if (++idx[d] < p.red_shape[d]) break;
      off -= p.red_stride[d] * p.red_shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace sg::kernels
