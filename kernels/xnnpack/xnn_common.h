// Shared pieces of the XNNPACK backend: operator ownership, status conversion and
// the pool an operator runs on, over the factories and helpers it shares with our
// own kernels (simd/simd_kernels.h; xnnpack_prepare routes every op to one of them).
#pragma once

#include <xnnpack.h>

#include "simd/simd_kernels.h"
#include "xnnpack/xnnpack_backend.h"

namespace sg::kernels::xnn {

struct OperatorDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using Operator = std::unique_ptr<xnn_operator, OperatorDeleter>;

// kInternal "xnnpack: <what> failed (<status>)" unless `s` is success.
Status check(xnn_status s, const char* what);

inline pthreadpool_t pool_of(const KernelContext& ctx) { return static_cast<pthreadpool_t>(ctx.threadpool); }
// The pool for an operator of about `flops` operations: none below kMinPoolFlops
// (simd_kernels.h).
inline pthreadpool_t pool_for(const KernelContext& ctx, double flops) {
  return flops >= kMinPoolFlops ? pool_of(ctx) : nullptr;
}

}  // namespace sg::kernels::xnn
