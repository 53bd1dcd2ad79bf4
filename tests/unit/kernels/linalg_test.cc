// sg.linalg's kernels (kernels/reference/linalg.cc), checked by what defines each
// result (A inv(A) = I, A x = b, L L^T = A, Q^T Q = I and QR = A, A v = w v) in
// float64 on the f32 outputs, and against textbook values for the conventions
// NumPy (LAPACK) fixes: slogdet's signs, qr's signs, eigh's order. NaN on failure.
#include <cmath>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;

// Element (b, i, j) of a stack of n x m matrices.
double el(const HostTensor& t, int64_t b, int64_t i, int64_t j) {
  const Shape& s = t.shape();
  const int64_t r = s[s.size() - 2], c = s.back();
  return t.at((b * r + i) * c + j);
}

// Random matrices made well conditioned: + shift on the diagonal.
HostTensor conditioned(Shape shape, uint32_t seed, double shift = 4) {
  HostTensor t = HostTensor::random(DType::kF32, shape, seed, -1, 1);
  const int64_t n = shape.back(), count = t.numel() / (n * n);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i) t.set((b * n + i) * n + i, t.at((b * n + i) * n + i) + shift);
  return t;
}

// max |a @ x - b| over a stack (a [..., n, n], x and b [..., n, k]).
double residual(const HostTensor& a, const HostTensor& x, const HostTensor& b) {
  const int64_t n = a.shape().back(), k = x.shape().back(), count = a.numel() / (n * n);
  double worst = 0;
  for (int64_t m = 0; m < count; ++m)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < k; ++c) {
        double s = 0;
        for (int64_t j = 0; j < n; ++j) s += el(a, m, i, j) * el(x, m, j, c);
        worst = std::max(worst, std::fabs(s - el(b, m, i, c)));
      }
  return worst;
}

HostTensor identity_stack(int64_t count, int64_t n) {
  HostTensor t(DType::kF32, {count, n, n});
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, (i % (n * n)) % (n + 1) == 0 ? 1 : 0);
  return t;
}

TEST(Linalg, InvTimesMatrixIsIdentity) {
  KernelTester t(OpId::Inv);
  t.in(conditioned({2, 4, 4}, 1)).out(DType::kF32, {2, 4, 4});
  ASSERT_TRUE(t.run().ok());
  EXPECT_LT(residual(t.inputs()[0], t.output(), identity_stack(2, 4)), 1e-5);
  KernelTester(OpId::Inv).in(HostTensor::of(DType::kF32, {2, 2}, {4, 7, 2, 6})).out(DType::kF32, {2, 2})
      .expect({0.6, -0.7, -0.2, 0.4}, 1e-6, 1e-7);
}

TEST(Linalg, SingularGivesNaNForThatMatrixOnly) {
  KernelTester t(OpId::Inv);
  t.in(HostTensor::of(DType::kF32, {2, 2, 2}, {1, 2, 2, 4, 2, 0, 0, 4})).out(DType::kF32, {2, 2, 2})
      .expect({NAN, NAN, NAN, NAN, 0.5, 0, 0, 0.25});
  KernelTester(OpId::Solve).in(HostTensor::of(DType::kF32, {2, 2}, {0, 0, 0, 0}))
      .in(HostTensor::of(DType::kF32, {2, 1}, {1, 1})).out(DType::kF32, {2, 1}).expect({NAN, NAN});
}

TEST(Linalg, SolveSatisfiesTheSystem) {
  KernelTester t(OpId::Solve);
  t.in(conditioned({3, 5, 5}, 2)).in(HostTensor::random(DType::kF32, {3, 5, 2}, 3)).out(DType::kF32, {3, 5, 2});
  ASSERT_TRUE(t.run().ok());
  EXPECT_LT(residual(t.inputs()[0], t.output(), t.inputs()[1]), 1e-5);
  // A permutation needs pivoting: [[0, 1], [1, 0]] x = [2, 3] -> [3, 2].
  KernelTester(OpId::Solve).in(HostTensor::of(DType::kF32, {2, 2}, {0, 1, 1, 0}))
      .in(HostTensor::of(DType::kF32, {2, 1}, {2, 3})).out(DType::kF32, {2, 1}).expect({3, 2});
}

TEST(Linalg, SlogdetSignsAndSingular) {
  // det [[0, 1], [1, 0]] = -1; det diag(2, 3) = 6; det [[1, 2], [2, 4]] = 0; det of -I3 = -1.
  KernelTester t(OpId::Slogdet);
  t.in(HostTensor::of(DType::kF32, {3, 2, 2}, {0, 1, 1, 0, 2, 0, 0, 3, 1, 2, 2, 4}))
      .out(DType::kF32, {3}).also_out(DType::kF32, {3});
  t.expect({-1, 1, 0});
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NEAR(t.extra_output(0).at(0), 0, 1e-7);
  EXPECT_NEAR(t.extra_output(0).at(1), std::log(6.0), 1e-6);
  EXPECT_EQ(t.extra_output(0).at(2), -inf);
  KernelTester neg(OpId::Slogdet);
  neg.in(HostTensor::of(DType::kF32, {3, 3}, {-1, 0, 0, 0, -1, 0, 0, 0, -1})).out(DType::kF32, {})
      .also_out(DType::kF32, {});
  neg.expect({-1});
  // A stack of 0 x 0 matrices: det 1 (NumPy's (1, 0)).
  KernelTester empty(OpId::Slogdet);
  empty.in(HostTensor(DType::kF32, {2, 0, 0})).out(DType::kF32, {2}).also_out(DType::kF32, {2});
  empty.expect({1, 1});
  EXPECT_EQ(empty.extra_output(0).at(1), 0);
}

TEST(Linalg, SlogdetOfARandomMatrixMatchesCofactors) {
  const HostTensor a = HostTensor::random(DType::kF32, {3, 3}, 7);
  auto m = [&](int i, int j) { return a.at(i * 3 + j); };
  const double det = m(0, 0) * (m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1)) -
                     m(0, 1) * (m(1, 0) * m(2, 2) - m(1, 2) * m(2, 0)) +
                     m(0, 2) * (m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0));
  KernelTester t(OpId::Slogdet);
  t.in(a).out(DType::kF32, {}).also_out(DType::kF32, {});
  t.expect({det < 0 ? -1.0 : 1.0});
  EXPECT_NEAR(t.extra_output(0).at(0), std::log(std::fabs(det)), 1e-5);
}

TEST(Linalg, CholeskyReadsTheLowerTriangle) {
  // A = M M^T + 2 I; its upper triangle overwritten with garbage the kernel must not read.
  const HostTensor m = HostTensor::random(DType::kF32, {2, 3, 3}, 4);
  HostTensor a(DType::kF32, {2, 3, 3}), full(DType::kF32, {2, 3, 3});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double s = i == j ? 2 : 0;
        for (int64_t k = 0; k < 3; ++k) s += el(m, b, i, k) * el(m, b, j, k);
        full.set((b * 3 + i) * 3 + j, s);
        a.set((b * 3 + i) * 3 + j, j > i ? 1e6 : s);
      }
  KernelTester t(OpId::Cholesky);
  t.in(a).out(DType::kF32, {2, 3, 3});
  ASSERT_TRUE(t.run().ok());
  const HostTensor& l = t.output();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_GT(el(l, b, i, i), 0);
      for (int64_t j = 0; j < 3; ++j) {
        if (j > i) { EXPECT_EQ(el(l, b, i, j), 0); }
        double s = 0;
        for (int64_t k = 0; k < 3; ++k) s += el(l, b, i, k) * el(l, b, j, k);
        EXPECT_NEAR(s, el(full, b, i, j), 1e-5);
      }
    }
  // Not positive definite: all NaN.
  KernelTester(OpId::Cholesky).in(HostTensor::of(DType::kF32, {2, 2}, {1, 2, 2, 1})).out(DType::kF32, {2, 2})
      .expect({NAN, NAN, NAN, NAN});
}

TEST(Linalg, TriangularSolveUsesOneTriangle) {
  for (int lower = 0; lower <= 1; ++lower) {
    SCOPED_TRACE(lower ? "lower" : "upper");
    HostTensor a = conditioned({2, 4, 4}, 5);
    HostTensor tri = a;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j)
          if (lower ? j > i : j < i) {
            a.set((b * 4 + i) * 4 + j, 1e6);  // never read
            tri.set((b * 4 + i) * 4 + j, 0);
          }
    KernelTester t(OpId::TriangularSolve);
    t.in(a).in(HostTensor::random(DType::kF32, {2, 4, 3}, 6)).out(DType::kF32, {2, 4, 3}).attr_int(lower);
    ASSERT_TRUE(t.run().ok());
    EXPECT_LT(residual(tri, t.output(), t.inputs()[1]), 1e-5);
  }
}

void check_qr(const Shape& shape, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "qr of " << shape[0] << "x" << shape[1] << "x" << shape[2]);
  const int64_t count = shape[0], m = shape[1], n = shape[2], k = std::min(m, n);
  KernelTester t(OpId::Qr);
  t.in(HostTensor::random(DType::kF32, shape, seed)).out(DType::kF32, {count, m, k}).also_out(DType::kF32, {count, k, n});
  ASSERT_TRUE(t.run().ok());
  const HostTensor &a = t.inputs()[0], &q = t.output(), &r = t.extra_output(0);
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) {
        double s = 0;
        for (int64_t p = 0; p < m; ++p) s += el(q, b, p, i) * el(q, b, p, j);
        EXPECT_NEAR(s, i == j ? 1 : 0, 1e-6);
      }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += el(q, b, i, p) * el(r, b, p, j);
        EXPECT_NEAR(s, el(a, b, i, j), 1e-5);
        if (i < k && j < i) { EXPECT_EQ(el(r, b, i, j), 0); }
      }
  }
}

TEST(Linalg, QrIsOrthonormalTimesUpperTriangular) {
  check_qr({2, 5, 3}, 8);
  check_qr({1, 3, 5}, 9);
  check_qr({3, 4, 4}, 10);
  check_qr({0, 4, 4}, 11);
}

TEST(Linalg, QrHasLapacksSigns) {
  // Householder as LAPACK's geqrf: r's diagonal is -sign(a's leading entry) * norm.
  KernelTester t(OpId::Qr);
  t.in(HostTensor::of(DType::kF32, {2, 1}, {3, 4})).out(DType::kF32, {2, 1}).also_out(DType::kF32, {1, 1});
  t.expect({-0.6, -0.8}, 1e-6);
  EXPECT_NEAR(t.extra_output(0).at(0), -5, 1e-6);
}

TEST(Linalg, EighAscendingOrthonormalSigned) {
  const int64_t n = 5;
  HostTensor a = HostTensor::random(DType::kF32, {2, n, n}, 12);
  HostTensor sym = a;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) {
        sym.set((b * n + i) * n + j, el(a, b, j, i));  // the lower triangle, mirrored
        a.set((b * n + i) * n + j, 1e6);               // never read
      }
  KernelTester t(OpId::Eigh);
  t.in(a).out(DType::kF32, {2, n}).also_out(DType::kF32, {2, n, n});
  ASSERT_TRUE(t.run().ok());
  const HostTensor &w = t.output(), &v = t.extra_output(0);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < n; ++c) {
      if (c > 0) { EXPECT_LE(w.at(b * n + c - 1), w.at(b * n + c)); }
      int64_t big = 0;
      for (int64_t i = 0; i < n; ++i) {
        double av = 0;
        for (int64_t j = 0; j < n; ++j) av += el(sym, b, i, j) * el(v, b, j, c);
        EXPECT_NEAR(av, w.at(b * n + c) * el(v, b, i, c), 1e-5);
        if (std::fabs(el(v, b, i, c)) > std::fabs(el(v, b, big, c))) big = i;
      }
      EXPECT_GT(el(v, b, big, c), 0);
      for (int64_t d = 0; d < n; ++d) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += el(v, b, i, c) * el(v, b, i, d);
        EXPECT_NEAR(s, c == d ? 1 : 0, 1e-6);
      }
    }
  // diag(3, 1, 2): eigenvalues 1, 2, 3 with unit vectors e1, e2, e0.
  KernelTester d(OpId::Eigh);
  d.in(HostTensor::of(DType::kF32, {3, 3}, {3, 0, 0, 0, 1, 0, 0, 0, 2})).out(DType::kF32, {3})
      .also_out(DType::kF32, {3, 3});
  d.expect({1, 2, 3});
  EXPECT_EQ(d.extra_output(0).values(), (std::vector<double>{0, 0, 1, 1, 0, 0, 0, 1, 0}));
  KernelTester bad(OpId::Eigh);
  bad.in(HostTensor::of(DType::kF32, {2, 2}, {NAN, 0, 0, 1})).out(DType::kF32, {2}).also_out(DType::kF32, {2, 2});
  bad.expect({NAN, NAN});
}

TEST(Linalg, ScratchIsOneMatrixInDouble) {
  HostTensor a(DType::kF32, {7, 4, 4});
  std::vector<TensorRef> in = {a.ref()};
  EXPECT_EQ(reference_scratch_size(OpId::Cholesky, {}, in), 16 * sizeof(double));
  EXPECT_GT(reference_scratch_size(OpId::Eigh, {}, in), 32 * sizeof(double));
}

}  // namespace
}  // namespace sg::kernels::testing
