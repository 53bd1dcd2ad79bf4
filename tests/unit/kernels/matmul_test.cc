// matmul: NumPy's rules for 1-D operands and batch broadcasting, against a
// float64 triple loop.
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;

// Reference for operands given as (batch dims, m, k) and (batch dims, k, n), with
// the 1-D promotion done by the caller's shapes.
std::vector<double> matmul_reference(const HostTensor& a, const HostTensor& b, const Shape& out_shape) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  const int64_t m = a1 ? 1 : as[as.size() - 2], k = as.back(), n = b1 ? 1 : bs.back();
  const Shape a_batch(as.begin(), as.end() - (a1 ? 1 : 2));
  const Shape b_batch(bs.begin(), bs.end() - (b1 ? 1 : 2));
  const Shape out_batch(out_shape.begin(), out_shape.end() - (a1 ? 0 : 1) - (b1 ? 0 : 1));
  std::vector<double> want;
  for (int64_t t = 0; t < numel_of(out_batch); ++t) {
    const auto idx = unravel(t, out_batch);
    const int64_t ab = broadcast_flat(idx, a_batch), bb = broadcast_flat(idx, b_batch);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += a.at((ab * m + i) * k + p) * b.at((bb * k + p) * n + j);
        want.push_back(s);
      }
  }
  return want;
}

void check_matmul(DType dt, const Shape& a, const Shape& b, const Shape& out, double rtol = 1e-5,
                  double atol = 1e-5) {
  SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " out rank " << out.size());
  KernelTester t(OpId::MatMul);
  t.in(HostTensor::random(dt, a, 31, -3, 3)).in(HostTensor::random(dt, b, 32, -3, 3)).out(dt, out);
  t.expect(matmul_reference(t.inputs()[0], t.inputs()[1], out), rtol, atol);
}

TEST(MatMul, ShapesLikeNumPy) {
  for (DType dt : {DType::kF32, DType::kI32, DType::kI64}) {
    check_matmul(dt, {3, 4}, {4, 5}, {3, 5});
    check_matmul(dt, {4}, {4, 5}, {5});           // 1-D left: row vector, dim dropped
    check_matmul(dt, {3, 4}, {4}, {3});           // 1-D right: column vector
    check_matmul(dt, {4}, {4}, {});               // dot product
    check_matmul(dt, {2, 3, 4}, {4, 5}, {2, 3, 5});
    check_matmul(dt, {2, 1, 3, 4}, {3, 4, 2}, {2, 3, 3, 2});  // batch broadcasting
    check_matmul(dt, {5}, {2, 5, 3}, {2, 3});
    check_matmul(dt, {2, 3, 5}, {5}, {2, 3});
    check_matmul(dt, {1, 1}, {1, 1}, {1, 1});
    check_matmul(dt, {3, 0}, {0, 2}, {3, 2});     // k = 0: zeros
    check_matmul(dt, {0, 4}, {4, 2}, {0, 2});
  }
  // More columns than one accumulator block.
  check_matmul(DType::kF32, {3, 70}, {70, 600}, {3, 600}, 1e-5, 1e-4);
}

TEST(MatMul, F16AccumulatesInFloat) {
  check_matmul(DType::kF16, {4, 64}, {64, 3}, {4, 3}, 3e-3, 2e-2);
}

TEST(MatMul, IntegerOverflowWraps) {
  const double big = 1 << 20;
  KernelTester(OpId::MatMul)
      .in(HostTensor::of(DType::kI32, {1, 2}, {big, big}))
      .in(HostTensor::of(DType::kI32, {2, 1}, {big, 1}))
      .out(DType::kI32, {1, 1})
      .expect({big});  // 2^40 wraps to 0, plus 2^20
}

TEST(MatMul, BoolIsAnyOfAnd) {
  KernelTester(OpId::MatMul)
      .in(HostTensor::of(DType::kBool, {2, 2}, {1, 0, 0, 0}))
      .in(HostTensor::of(DType::kBool, {2, 2}, {1, 1, 1, 0}))
      .out(DType::kBool, {2, 2})
      .expect({1, 1, 0, 0});
}

TEST(MatMul, InnerDimMismatchIsRejected) {
  KernelTester(OpId::MatMul)
      .in(HostTensor(DType::kF32, {2, 3}))
      .in(HostTensor(DType::kF32, {4, 5}))
      .out(DType::kF32, {2, 5})
      .expect_error(StatusCode::kInternal, "matmul: f32[2, 3] @ f32[4, 5] -> f32[2, 5]");
}

}  // namespace
}  // namespace sg::kernels::testing
