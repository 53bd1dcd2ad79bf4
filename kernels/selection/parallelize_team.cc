// kernels::parallelize (interface/kernel.h) for builds without XNNPACK
// (-DSG_WITH_XNNPACK=OFF): over the context's team when it has one, else on this
// thread. With XNNPACK the backend defines it (xnnpack_backend.cc), adding
// pthreadpools. Part of the selection: kernels/CMakeLists.txt (and mobile/'s core)
// compile it in exactly when the build has no XNNPACK.
#include <cstddef>

#include "interface/kernel.h"

namespace sg::kernels {

void parallelize(const KernelContext& ctx, void (*task)(void*, size_t), void* context, size_t n) {
  if (ctx.team != nullptr) {
    ctx.team->run(task, context, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) task(context, i);
}

}  // namespace sg::kernels
