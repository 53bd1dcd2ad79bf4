// take for any dtype, moved as words of its size.
#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/kernel_util.h"

namespace sg::kernels::cuda {
namespace {

// o[a, i, b] = x[a, idx[i], b] over x seen as [outer, n, inner].
template <class W, class I>
__global__ void take_kernel(const W* x, const I* idx, W* o, int64_t outer, int64_t n, int64_t inner, int64_t count,
                            int* error) {
  const int64_t total = outer * count * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i % inner, k = (i / inner) % count, a = i / (inner * count);
    int64_t j = int64_t(idx[k]);
    if (j < -n || j >= n) {
      atomicCAS(error, 0, int(kTakeIndexOutOfRange));
      o[i] = W(0);
      continue;
    }
    if (j < 0) j += n;
    o[i] = x[(a * n + j) * inner + b];
  }
}

}  // namespace

template <class W>
static void launch_take(unsigned g, cudaStream_t st, const TensorRef& x, const TensorRef& idx, TensorRef& o,
                        const AxisView& v, int64_t count, int* err) {
  if (idx.dtype == DType::kI64)
    take_kernel<W, int64_t><<<g, kBlock, 0, st>>>(x.as<const W>(), idx.as<const int64_t>(), o.as<W>(), v.outer, v.n, v.inner, count, err);
  else
    take_kernel<W, int32_t><<<g, kBlock, 0, st>>>(x.as<const W>(), idx.as<const int32_t>(), o.as<W>(), v.outer, v.n, v.inner, count, err);
}

Status run_take(Context& ctx, int axis, const TensorRef& x, const TensorRef& idx, TensorRef& o) {
  if (axis < 0 || axis >= x.rank) return internal_error("cuda take: axis");
  const AxisView v = axis_view(x, axis);
  const int64_t count = idx.numel();
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  if (v.n == 0) return runtime_error("take: index out of range (axis " + std::to_string(axis) + " is empty)");
  const unsigned g = grid_for(n);
  cudaStream_t st = state(ctx).stream;
  int* err = state(ctx).error_flag;
  switch (dtype_size(x.dtype)) {
    case 1: launch_take<uint8_t>(g, st, x, idx, o, v, count, err); break;
    case 2: launch_take<uint16_t>(g, st, x, idx, o, v, count, err); break;
    case 4: launch_take<uint32_t>(g, st, x, idx, o, v, count, err); break;
    default: launch_take<uint64_t>(g, st, x, idx, o, v, count, err); break;
  }
  return launched("take");
}

}  // namespace sg::kernels::cuda
