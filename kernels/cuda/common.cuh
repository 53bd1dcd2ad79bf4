// Internals shared by the CUDA backend's files: error mapping, launch shapes,
// the context's state, and the operand descriptors kernels take by value.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/cuda_backend.h"

namespace sg::kernels::cuda {

// Device-side errors a kernel can raise (Context::synchronize reports them).
enum DeviceError : int { kNoDeviceError = 0, kTakeIndexOutOfRange = 1 };

Status cuda_status(cudaError_t e, const std::string& what);
Status cublas_status(cublasStatus_t s, const std::string& what);

#define SG_CUDA_TRY(expr, what)                                 \
  do {                                                          \
    const cudaError_t sg_cuda_err_ = (expr);                    \
    if (sg_cuda_err_ != cudaSuccess) return cuda_status(sg_cuda_err_, what); \
  } while (0)
#define SG_CUBLAS_TRY(expr, what)                                       \
  do {                                                                  \
    const cublasStatus_t sg_cublas_err_ = (expr);                       \
    if (sg_cublas_err_ != CUBLAS_STATUS_SUCCESS) return cublas_status(sg_cublas_err_, what); \
  } while (0)

class ContextImpl {
 public:
  ContextOptions options;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  int* error_flag = nullptr;  // device int, kNoDeviceError when nothing failed
};

inline ContextImpl& state(Context& ctx) { return ctx.impl(); }

// A grid-stride launch shape for n elements.
constexpr int kBlock = 256;
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  return unsigned(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

// One warp per output element or lane (reductions, softmax, layer_norm): a grid
// of blocks of kWarpsPerBlock warps for `items` of them, which combine with shuffles.
constexpr int kWarpsPerBlock = 8;
inline unsigned warp_grid(int64_t items) {
  const int64_t blocks = (items + kWarpsPerBlock - 1) / kWarpsPerBlock;
  return unsigned(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Launch errors (bad configuration) are reported at once; faults inside the
// kernel surface at the next synchronize.
inline Status launched(const char* what) {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status::Ok() : cuda_status(e, what);
}

// Up to kMaxRank dims with per-operand element strides, by value into kernels.
template <int N>
struct Strided {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};
};

}  // namespace sg::kernels::cuda
