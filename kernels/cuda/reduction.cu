// The reduction family: reductions and arg-reductions. One warp per output
// element: its 32 threads stride over the reduced elements and combine with
// shuffles, so both few large and many small reductions keep the GPU busy.
#include <cfloat>
#include <cmath>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/kernel_util.h"
#include "reference/reduction_plan.h"

namespace sg::kernels::cuda {
namespace {

using ops::OpId;

struct ReduceDesc {
  int kept_rank = 0, red_rank = 0;
  int64_t kept_shape[kMaxRank], kept_stride[kMaxRank];
  int64_t red_shape[kMaxRank], red_stride[kMaxRank];
  int64_t out_numel = 0, count = 0;
};

__device__ __forceinline__ int64_t walk(const int64_t* shape, const int64_t* stride, int rank, int64_t i) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (i % shape[d]) * stride[d];
    i /= shape[d];
  }
  return off;
}

__device__ __forceinline__ float nan_max(float a, float b) { return (a != a || b != b) ? NAN : fmaxf(a, b); }
__device__ __forceinline__ float nan_min(float a, float b) { return (a != a || b != b) ? NAN : fminf(a, b); }

template <OpId Op>
__global__ void reduce_kernel(const float* x, float* o, ReduceDesc r) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * kWarpsPerBlock;
  for (int64_t out = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32; out < r.out_numel; out += warps) {
    const int64_t base = walk(r.kept_shape, r.kept_stride, r.kept_rank, out);
    if constexpr (Op == OpId::Sum || Op == OpId::Mean) {
      double acc = 0;
      for (int64_t i = lane; i < r.count; i += 32) acc += double(x[base + walk(r.red_shape, r.red_stride, r.red_rank, i)]);
      acc = warp_sum(acc);
      if (lane == 0) o[out] = float(Op == OpId::Mean ? acc / double(r.count) : acc);
    } else {
      float acc = Op == OpId::Max ? -INFINITY : INFINITY;
      for (int64_t i = lane; i < r.count; i += 32) {
        const float v = x[base + walk(r.red_shape, r.red_stride, r.red_rank, i)];
        acc = Op == OpId::Max ? nan_max(acc, v) : nan_min(acc, v);
      }
      for (int s = 16; s > 0; s >>= 1) {
        const float v = __shfl_xor_sync(0xffffffffu, acc, s);
        acc = Op == OpId::Max ? nan_max(acc, v) : nan_min(acc, v);
      }
      if (lane == 0) o[out] = acc;
    }
  }
}

// argmax/argmin over [outer, n, inner]: the first extreme, a NaN counting as the
// extreme (NumPy's first NaN).
template <bool kMax>
__global__ void arg_kernel(const float* x, int64_t* o, int64_t outer, int64_t n, int64_t inner) {
  const int64_t lanes = outer * inner;
  for (int64_t l = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; l < lanes; l += int64_t(gridDim.x) * blockDim.x) {
    const float* p = x + (l / inner) * n * inner + l % inner;
    int64_t best = 0;
    float bv = p[0];
    if (bv == bv) {
      for (int64_t i = 1; i < n; ++i) {
        const float v = p[i * inner];
        if (v != v) { best = i; break; }
        if (kMax ? v > bv : v < bv) { bv = v; best = i; }
      }
    }
    o[l] = best;
  }
}

}  // namespace

Status run_reduce(Context& ctx, OpId op, const ops::Attrs& attrs, const TensorRef& x, TensorRef& o) {
  bool reduced[kMaxRank] = {};
  for (int64_t a : attrs.ints(ops::attr::kReduceAxes)) {
    if (a < 0 || a >= x.rank) return internal_error("cuda reduce: axis");
    reduced[a] = true;
  }
  const ReductionPlan p = make_reduction_plan(x, reduced);
  ReduceDesc r;
  r.kept_rank = p.kept_rank;
  r.red_rank = p.red_rank;
  for (int d = 0; d < kMaxRank; ++d) {
    r.kept_shape[d] = p.kept_shape[d];
    r.kept_stride[d] = p.kept_stride[d];
    r.red_shape[d] = p.red_shape[d];
    r.red_stride[d] = p.red_stride[d];
  }
  r.out_numel = p.out_numel;
  r.count = p.count;
  if (r.out_numel == 0) return Status::Ok();
  cudaStream_t st = state(ctx).stream;
  const unsigned g = warp_grid(r.out_numel);
  switch (op) {
    case OpId::Sum: reduce_kernel<OpId::Sum><<<g, 32 * kWarpsPerBlock, 0, st>>>(x.as<const float>(), o.as<float>(), r); break;
    case OpId::Mean: reduce_kernel<OpId::Mean><<<g, 32 * kWarpsPerBlock, 0, st>>>(x.as<const float>(), o.as<float>(), r); break;
    case OpId::Max: reduce_kernel<OpId::Max><<<g, 32 * kWarpsPerBlock, 0, st>>>(x.as<const float>(), o.as<float>(), r); break;
    case OpId::Min: reduce_kernel<OpId::Min><<<g, 32 * kWarpsPerBlock, 0, st>>>(x.as<const float>(), o.as<float>(), r); break;
    default: return internal_error("cuda reduce: op");
  }
  return launched(ops::op_def(op).name);
}

Status run_arg_reduce(Context& ctx, OpId op, const ops::Attrs& attrs, const TensorRef& x, TensorRef& o) {
  const int axis = int(attrs.i(ops::attr::kArgAxis));
  if (axis < 0 || axis >= x.rank) return internal_error("cuda argmax: axis");
  const AxisView v = axis_view(x, axis);
  if (v.outer * v.inner == 0) return Status::Ok();
  const unsigned g = grid_for(v.outer * v.inner);
  if (op == OpId::ArgMax) arg_kernel<true><<<g, kBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<int64_t>(), v.outer, v.n, v.inner);
  else arg_kernel<false><<<g, kBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<int64_t>(), v.outer, v.n, v.inner);
  return launched(ops::op_def(op).name);
}

}  // namespace sg::kernels::cuda
