// The shape family's data movement (transpose, concatenate, the copies of reshape,
// squeeze and expand_dims) for any dtype, moved as words of its size.
#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/kernel_util.h"

namespace sg::kernels::cuda {
namespace {

template <class W>
__global__ void transpose_kernel(const W* x, W* o, int64_t n, Strided<1> s) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t j = i, off = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      off += (j % s.shape[d]) * s.strides[0][d];
      j /= s.shape[d];
    }
    o[i] = x[off];
  }
}

// One input's block [outer, rows] into the output [outer, total] at column `at`.
template <class W>
__global__ void place_kernel(const W* x, W* o, int64_t outer, int64_t rows, int64_t total, int64_t at) {
  const int64_t n = outer * rows;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    o[(i / rows) * total + at + i % rows] = x[i];
}

}  // namespace

Status run_transpose(Context& ctx, const std::vector<int64_t>& perm, const TensorRef& x, TensorRef& o) {
  if (int(perm.size()) != x.rank) return internal_error("cuda transpose: permutation");
  Strided<1> s;
  s.rank = x.rank;
  int64_t in_strides[kMaxRank];
  int64_t st = 1;
  for (int d = x.rank - 1; d >= 0; --d) {
    in_strides[d] = st;
    st *= x.shape[d];
  }
  for (int d = 0; d < x.rank; ++d) {
    s.shape[d] = o.shape[d];
    s.strides[0][d] = in_strides[perm[d]];
  }
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  const unsigned g = grid_for(n);
  cudaStream_t stream = state(ctx).stream;
  switch (dtype_size(x.dtype)) {
    case 1: transpose_kernel<uint8_t><<<g, kBlock, 0, stream>>>(x.as<const uint8_t>(), o.as<uint8_t>(), n, s); break;
    case 2: transpose_kernel<uint16_t><<<g, kBlock, 0, stream>>>(x.as<const uint16_t>(), o.as<uint16_t>(), n, s); break;
    case 4: transpose_kernel<uint32_t><<<g, kBlock, 0, stream>>>(x.as<const uint32_t>(), o.as<uint32_t>(), n, s); break;
    default: transpose_kernel<uint64_t><<<g, kBlock, 0, stream>>>(x.as<const uint64_t>(), o.as<uint64_t>(), n, s); break;
  }
  return launched("transpose");
}

Status run_concatenate(Context& ctx, int axis, std::span<const TensorRef> in, TensorRef& o) {
  if (axis < 0 || axis >= o.rank) return internal_error("cuda concatenate: axis");
  const AxisView ov = axis_view(o, axis);
  const int64_t total = ov.n * ov.inner;
  int64_t at = 0;
  cudaStream_t st = state(ctx).stream;
  for (const TensorRef& x : in) {
    const int64_t rows = x.shape[axis] * ov.inner;
    const int64_t n = ov.outer * rows;
    if (n > 0) {
      const unsigned g = grid_for(n);
      switch (dtype_size(o.dtype)) {
        case 1: place_kernel<uint8_t><<<g, kBlock, 0, st>>>(x.as<const uint8_t>(), o.as<uint8_t>(), ov.outer, rows, total, at); break;
        case 2: place_kernel<uint16_t><<<g, kBlock, 0, st>>>(x.as<const uint16_t>(), o.as<uint16_t>(), ov.outer, rows, total, at); break;
        case 4: place_kernel<uint32_t><<<g, kBlock, 0, st>>>(x.as<const uint32_t>(), o.as<uint32_t>(), ov.outer, rows, total, at); break;
        default: place_kernel<uint64_t><<<g, kBlock, 0, st>>>(x.as<const uint64_t>(), o.as<uint64_t>(), ov.outer, rows, total, at); break;
      }
      SG_RETURN_IF_ERROR(launched("concatenate"));
    }
    at += rows;
  }
  return Status::Ok();
}

Status run_copy(Context& ctx, const TensorRef& x, TensorRef& o) {
  if (x.nbytes() != o.nbytes()) return internal_error("cuda copy: sizes differ");
  if (x.data == o.data || o.nbytes() == 0) return Status::Ok();
  SG_CUDA_TRY(cudaMemcpyAsync(o.data, x.data, o.nbytes(), cudaMemcpyDeviceToDevice, state(ctx).stream), "copy");
  return Status::Ok();
}

}  // namespace sg::kernels::cuda
