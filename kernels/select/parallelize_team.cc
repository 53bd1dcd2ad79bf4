// kernels::parallelize for builds without XNNPACK (-DSG_WITH_XNNPACK=OFF): over
// the context's team when it has one, else on this thread. With XNNPACK the
// backend defines it (xnnpack_backend.cc), adding pthreadpools.
#include <cstddef>

#include "reference/kernel.h"

namespace sg::kernels {

void parallelize(const KernelContext& ctx, void (*task)(void*, size_t), void* context, size_t n) {
  if (ctx.team != nullptr) {
    ctx.team->run(task, context, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) task(context, i);
}

}  // namespace sg::kernels
