// cumsum along one axis (the ordering family: ops/infer_ordering.cc,
// reference/ordering.cc). One thread per lane of the axis, summing in order as
// the reference does.
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/kernel_util.h"

namespace sg::kernels::cuda {
namespace {

template <class T>
__global__ void cumsum_kernel(const T* x, T* o, int64_t outer, int64_t n, int64_t inner) {
  const int64_t lanes = outer * inner;
  for (int64_t l = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; l < lanes; l += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    T acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      acc += x[base + i * inner];
      o[base + i * inner] = acc;
    }
  }
}

}  // namespace

Status run_cumsum(Context& ctx, int axis, const TensorRef& x, TensorRef& o) {
  if (axis < 0 || axis >= x.rank) return internal_error("cuda cumsum: axis");
  const AxisView v = axis_view(x, axis);
  if (v.outer * v.inner * v.n == 0) return Status::Ok();
  const unsigned g = grid_for(v.outer * v.inner);
  if (x.dtype == DType::kF32) cumsum_kernel<float><<<g, kBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<float>(), v.outer, v.n, v.inner);
  else cumsum_kernel<int64_t><<<g, kBlock, 0, state(ctx).stream>>>(x.as<const int64_t>(), o.as<int64_t>(), v.outer, v.n, v.inner);
  return launched("cumsum");
}

}  // namespace sg::kernels::cuda
