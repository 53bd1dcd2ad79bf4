// matmul with NumPy's semantics: a 1-D left operand is a row vector and a 1-D
// right operand a column vector (their dims dropped from the result); the batch
// dims (all but the last two) broadcast.
#include <algorithm>
#include <array>
#include <string>

#include "reference/broadcast.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"

namespace sg::kernels {
namespace {

// Floats accumulate in float (f16 too, as NumPy does through its float loops);
// integers in the unsigned type of their width so that overflow wraps; bool
// counts true products and stores "any".
template <DType T>
using MatAcc = std::conditional_t<
    is_float(T), float,
    std::conditional_t<T == DType::kI32, uint32_t, std::conditional_t<T == DType::kI64, uint64_t, uint32_t>>>;

// The accumulators of one block of output columns live on the stack, so the
// i-k-j loop streams rows of b without allocating.
constexpr int64_t kColumnBlock = 256;

// Rows between two looks at the run's interrupt flag (KernelContext::interrupted).
constexpr int64_t kInterruptRows = 64;

// False when it stopped early, interrupted.
template <DType T>
bool matmul_one(const KernelContext& ctx, const Storage<T>* a, const Storage<T>* b, Storage<T>* c, int64_t m,
                int64_t k, int64_t n) {
  using Acc = MatAcc<T>;
  Acc acc[kColumnBlock];
  for (int64_t i = 0; i < m; ++i) {
    if (i % kInterruptRows == 0 && ctx.interrupted()) return false;
    const Storage<T>* arow = a + i * k;
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
      const int64_t nb = std::min(kColumnBlock, n - j0);
      for (int64_t j = 0; j < nb; ++j) acc[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        const Acc av = convert<Acc>(load<T>(arow[p]));
        const Storage<T>* brow = b + p * n + j0;
        if constexpr (T == DType::kF32) {
          for (int64_t j = 0; j < nb; ++j) acc[j] += av * brow[j];
        } else {
          for (int64_t j = 0; j < nb; ++j) acc[j] += av * convert<Acc>(load<T>(brow[j]));
        }
      }
      Storage<T>* crow = c + i * n + j0;
      for (int64_t j = 0; j < nb; ++j) crow[j] = store<T>(acc[j]);
    }
  }
  return true;
}

struct MatShape {
  int64_t m, k, n;
};

// The batch dims of an operand: all but its `matrix_rank` trailing dims.
TensorRef batch_view(const TensorRef& t, int matrix_rank) {
  TensorRef v = t;
  v.rank = t.rank - matrix_rank;
  return v;
}

Status run_matmul(const KernelContext& ctx, const ops::Attrs&, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("matmul", in, 2, out));
  const TensorRef& a = in[0];
  const TensorRef& b = in[1];
  TensorRef& o = out[0];
  auto mismatch = [&] {
    return internal_error("matmul: " + describe(a) + " @ " + describe(b) + " -> " + describe(o));
  };
  if (a.rank < 1 || b.rank < 1 || a.dtype != b.dtype || o.dtype != a.dtype) return mismatch();
  const int ar = a.rank == 1 ? 1 : 2, br = b.rank == 1 ? 1 : 2;
  const MatShape s{a.rank == 1 ? 1 : a.shape[a.rank - 2], a.shape[a.rank - 1],
                   b.rank == 1 ? 1 : b.shape[b.rank - 1]};
  if (b.shape[b.rank - br] != s.k) return mismatch();
  // The output's batch dims are everything but its (up to two) matrix dims.
  const int out_matrix_rank = (a.rank == 1 ? 0 : 1) + (b.rank == 1 ? 0 : 1);
  if (o.rank < out_matrix_rank) return mismatch();
  TensorRef out_batch = batch_view(o, out_matrix_rank);
  const TensorRef a_batch = batch_view(a, ar), b_batch = batch_view(b, br);
  BroadcastPlan<2> plan;
  if (!make_broadcast_plan<2>(out_batch, {&a_batch, &b_batch}, plan)) return mismatch();
  if (out_batch.numel() * s.m * s.n != o.numel()) return mismatch();
  if (o.numel() == 0) return Status::Ok();

  bool finished = true;
  visit_dtype(a.dtype, [&](auto t) {
    constexpr DType T = decltype(t)::value;
    const Storage<T>* pa = a.as<Storage<T>>();
    const Storage<T>* pb = b.as<Storage<T>>();
    Storage<T>* pc = o.as<Storage<T>>();
    const int64_t a_size = s.m * s.k, b_size = s.k * s.n, c_size = s.m * s.n;
    for_each_broadcast_row<2>(plan, [&](int64_t oo, const int64_t* off, int64_t rows, const int64_t* step) {
      for (int64_t r = 0; r < rows && finished; ++r)
        finished = matmul_one<T>(ctx, pa + (off[0] + r * step[0]) * a_size, pb + (off[1] + r * step[1]) * b_size,
                                 pc + (oo + r) * c_size, s.m, s.k, s.n);
    });
  });
  return finished ? Status::Ok() : interrupted_status();
}

}  // namespace

KernelFn matmul_kernel(ops::OpId op) {
  return op == ops::OpId::MatMul ? &run_matmul : nullptr;
}

}  // namespace sg::kernels
