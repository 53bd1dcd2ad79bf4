// ThreadPool: a pthreadpool that several Sessions share (runtime.h).
#include <memory>
#include <string>

#include "node_kernels.h"
#include "stagegraph/runtime.h"

#ifdef SG_HAVE_XNNPACK
#include "xnnpack/xnnpack_backend.h"
#endif

namespace sg {

Status check_num_threads(int num_threads) {
  if (num_threads >= 1 && num_threads <= SessionOptions::kMaxThreads) return Status::Ok();
  return invalid_argument("num_threads must be between 1 and " + std::to_string(SessionOptions::kMaxThreads) +
                          " (got " + std::to_string(num_threads) + ")");
}

Result<std::shared_ptr<ThreadPool>> ThreadPool::create(int num_threads) {
  SG_RETURN_IF_ERROR(check_num_threads(num_threads).with_context("ThreadPool::create"));
  void* pool = nullptr;
  int threads = 1;
#ifdef SG_HAVE_XNNPACK
  threads = runtime::usable_threads(num_threads);
  if (threads > 1) {
    pool = kernels::xnnpack_create_threadpool(threads);
    if (pool == nullptr) return out_of_memory("cannot start a thread pool of " + std::to_string(threads) + " threads");
  }
#endif
  return std::shared_ptr<ThreadPool>(new ThreadPool(pool, threads));
}

ThreadPool::~ThreadPool() {
#ifdef SG_HAVE_XNNPACK
  kernels::xnnpack_destroy_threadpool(pool_);
#endif
}

}  // namespace sg
