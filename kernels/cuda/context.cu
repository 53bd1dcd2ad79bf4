// Device discovery, the per-Session context, and CUDA/cuBLAS errors as Status.
#include <string>

#include "cuda/common.cuh"

namespace sg::kernels::cuda {

Status cuda_status(cudaError_t e, const std::string& what) {
  StatusCode code = StatusCode::kRuntimeError;
  if (e == cudaErrorMemoryAllocation) code = StatusCode::kOutOfMemory;
  else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorNoKernelImageForDevice ||
           e == cudaErrorInvalidDevice)
    code = StatusCode::kUnsupported;
  return Status(code, what + ": CUDA error " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

Status cublas_status(cublasStatus_t s, const std::string& what) {
  const StatusCode code = s == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kOutOfMemory
                          : s == CUBLAS_STATUS_NOT_SUPPORTED ? StatusCode::kUnsupported
                                                             : StatusCode::kRuntimeError;
  return Status(code, what + ": cuBLAS error " + std::to_string(int(s)) + " (" + cublasLtGetStatusName(s) + ")");
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

Result<DeviceInfo> device_info(int index) {
  const int n = device_count();
  if (index < 0 || index >= n)
    return Status(StatusCode::kUnsupported, "cuda:" + std::to_string(index) + ": no such device (" +
                                                std::to_string(n) + " CUDA device(s) visible)");
  cudaDeviceProp p{};
  SG_CUDA_TRY(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
  DeviceInfo info;
  info.index = index;
  info.name = p.name;
  info.sm_major = p.major;
  info.sm_minor = p.minor;
  info.total_memory = p.totalGlobalMem;
  return info;
}

Context::Context(std::unique_ptr<ContextImpl> impl) : impl_(std::move(impl)) {}

Context::~Context() {
  ContextImpl& s = *impl_;
  if (s.stream != nullptr) (void)cudaStreamSynchronize(s.stream);
  if (s.lt != nullptr) (void)cublasLtDestroy(s.lt);
  if (s.workspace != nullptr) (void)cudaFree(s.workspace);
  if (s.error_flag != nullptr) (void)cudaFree(s.error_flag);
  if (s.stream != nullptr) (void)cudaStreamDestroy(s.stream);
}

Result<std::unique_ptr<Context>> Context::create(const ContextOptions& options) {
  SG_ASSIGN_OR_RETURN(DeviceInfo info, device_info(options.device));
  SG_CUDA_TRY(cudaSetDevice(options.device), "cudaSetDevice");
  auto impl = std::make_unique<ContextImpl>();
  impl->options = options;
  std::unique_ptr<Context> ctx(new Context(std::move(impl)));
  ContextImpl& s = *ctx->impl_;
  SG_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  SG_CUBLAS_TRY(cublasLtCreate(&s.lt), "cublasLtCreate");
  s.workspace_bytes = options.workspace_bytes != 0 ? options.workspace_bytes
                      : info.sm_major >= 9         ? size_t(32) << 20
                                                   : size_t(4) << 20;
  SG_CUDA_TRY(cudaMalloc(&s.workspace, s.workspace_bytes), "cuBLASLt workspace");
  SG_CUDA_TRY(cudaMalloc(&s.error_flag, sizeof(int)), "device error flag");
  SG_CUDA_TRY(cudaMemsetAsync(s.error_flag, 0, sizeof(int), s.stream), "cudaMemset");
  return Result<std::unique_ptr<Context>>(std::move(ctx));
}

const ContextOptions& Context::options() const { return impl_->options; }

Result<void*> Context::allocate(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, impl_->stream);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return cuda_status(e, "cannot allocate " + std::to_string(bytes) + " bytes of device memory");
  }
  return p;
}

void Context::release(void* p) {
  if (p != nullptr) (void)cudaFreeAsync(p, impl_->stream);
}

Status Context::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  SG_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, impl_->stream), "host-to-device copy");
  return Status::Ok();
}

Status Context::download(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  SG_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, impl_->stream), "device-to-host copy");
  return Status::Ok();
}

Status Context::synchronize() {
  ContextImpl& s = *impl_;
  SG_CUDA_TRY(cudaStreamSynchronize(s.stream), "running on the GPU");
  int flag = 0;
  SG_CUDA_TRY(cudaMemcpy(&flag, s.error_flag, sizeof flag, cudaMemcpyDeviceToHost), "reading the device error flag");
  if (flag == kNoDeviceError) return Status::Ok();
  SG_CUDA_TRY(cudaMemset(s.error_flag, 0, sizeof(int)), "cudaMemset");
  switch (flag) {
    case kTakeIndexOutOfRange:
      return Status(StatusCode::kRuntimeError, "take: index out of range");
    default:
      return Status(StatusCode::kInternal, "a CUDA kernel raised error " + std::to_string(flag));
  }
}

}  // namespace sg::kernels::cuda
