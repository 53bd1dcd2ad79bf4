// The sg.linalg kernels (docs/SPEC.md §7, "Linear algebra"): inv, solve, slogdet,
// cholesky, triangular_solve, qr, eigh on f32 stacks of matrices (the last two axes;
// the leading ones are a batch). Each matrix is computed in double in the scratch
// the runtime gives (linalg_scratch_size) and rounded once to f32.
//
// One LU factorization (partial pivoting, LAPACK getrf's choice of pivot: the first
// largest magnitude) serves inv, solve and slogdet. Numerical failure gives NaN, as
// JAX does, never an error: a singular matrix (an exact zero pivot) makes every
// element of that matrix's inv or solve NaN, slogdet (0, -inf) as NumPy; a matrix
// that is not positive definite makes its cholesky all NaN. triangular_solve divides
// by the diagonal as it is (a zero there gives inf or NaN). qr is Householder's, with
// LAPACK's signs (geqrf/orgqr), so q and r agree with NumPy's; eigh is cyclic Jacobi
// on the lower triangle (as NumPy's UPLO='L'), eigenvalues ascending, each
// eigenvector's largest-magnitude entry (the first such) made positive.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A stack of matrices: `count` matrices of rows x cols.
struct Stack {
  int64_t count = 1;
  int64_t rows = 0;
  int64_t cols = 0;
};

Stack stack_of(const TensorRef& t) {
  Stack s;
  for (int d = 0; d + 2 < t.rank; ++d) s.count *= t.shape[d];
  s.rows = t.rank >= 2 ? t.shape[t.rank - 2] : 0;
  s.cols = t.rank >= 1 ? t.shape[t.rank - 1] : 0;
  return s;
}

void load(const float* src, int64_t n, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = double(src[i]);
}

void store(const double* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float(src[i]);
}

// In-place LU of the n x n row-major `a` with row pivots `piv`; the permutation's
// parity (+1, -1) in `parity`. False when a pivot is exactly zero (singular).
bool lu(double* a, int64_t n, int64_t* piv, int& parity) {
  bool regular = true;
  parity = 1;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; ++i)
      if (std::fabs(a[i * n + j]) > std::fabs(a[p * n + j])) p = i;
    piv[j] = p;
    if (p != j) {
      for (int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[p * n + c]);
      parity = -parity;
    }
    const double d = a[j * n + j];
    if (d == 0) {
      regular = false;
      continue;
    }
    for (int64_t i = j + 1; i < n; ++i) {
      const double l = a[i * n + j] /= d;
      for (int64_t c = j + 1; c < n; ++c) a[i * n + c] -= l * a[j * n + c];
    }
  }
  return regular;
}

// Solves (LU) x = P b for the n x k row-major b, in place.
void lu_solve(const double* a, int64_t n, const int64_t* piv, double* b, int64_t k) {
  for (int64_t j = 0; j < n; ++j)
    if (piv[j] != j)
      for (int64_t c = 0; c < k; ++c) std::swap(b[j * k + c], b[piv[j] * k + c]);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      for (int64_t c = 0; c < k; ++c) b[i * k + c] -= a[i * n + j] * b[j * k + c];
  for (int64_t i = n - 1; i >= 0; --i) {
    for (int64_t j = i + 1; j < n; ++j)
      for (int64_t c = 0; c < k; ++c) b[i * k + c] -= a[i * n + j] * b[j * k + c];
    for (int64_t c = 0; c < k; ++c) b[i * k + c] /= a[i * n + i];
  }
}

// Scratch layout of one matrix: doubles first, then the pivots.
struct Scratch {
  double* a = nullptr;   // the matrix (its factors)
  double* b = nullptr;   // the right-hand side / result
  double* c = nullptr;   // more room (qr's q, eigh's vectors)
  int64_t* piv = nullptr;
};

// Doubles of the a, b and c regions and the pivots each op needs per matrix.
struct Need {
  int64_t a = 0, b = 0, c = 0, piv = 0;
  int64_t bytes() const { return (a + b + c) * int64_t(sizeof(double)) + piv * int64_t(sizeof(int64_t)); }
};

Need need_of(ops::OpId op, std::span<const TensorRef> in) {
  using ops::OpId;
  Need nd;
  if (in.empty() || in[0].rank < 2) return nd;
  const Stack s = stack_of(in[0]);
  const int64_t n = s.rows, m = s.cols, k = std::min(s.rows, s.cols);
  const int64_t rhs = in.size() > 1 && in[1].rank >= 2 ? in[1].shape[in[1].rank - 1] : 0;
  switch (op) {
    case OpId::Inv: nd = {n * n, n * n, 0, n}; break;
    case OpId::Solve: nd = {n * n, n * rhs, 0, n}; break;
    case OpId::Slogdet: nd = {n * n, 0, 0, n}; break;
    case OpId::Cholesky: nd = {n * n, 0, 0, 0}; break;
    case OpId::TriangularSolve: nd = {n * n, n * rhs, 0, 0}; break;
    case OpId::Qr: nd = {n * m, k, n * k, 0}; break;
    case OpId::Eigh: nd = {n * n, n, n * n, n}; break;
    default: break;
  }
  return nd;
}

Result<Scratch> scratch_for(const KernelContext& ctx, ops::OpId op, std::span<const TensorRef> in) {
  const Need nd = need_of(op, in);
  if (ctx.scratch_size < size_t(nd.bytes()) || (nd.bytes() > 0 && ctx.scratch == nullptr))
    return internal_error(std::string(ops::op_def(op).name) + ": needs " + std::to_string(nd.bytes()) +
                          " bytes of scratch");
  Scratch s;
  s.a = static_cast<double*>(ctx.scratch);
  s.b = s.a + nd.a;
  s.c = s.b + nd.b;
  s.piv = reinterpret_cast<int64_t*>(s.c + nd.c);
  return s;
}

Status bad_operands(ops::OpId op, std::span<const TensorRef> in, std::span<TensorRef> out) {
  std::string text = std::string(ops::op_def(op).name) + ": ";
  for (size_t i = 0; i < in.size(); ++i) text += (i ? ", " : "") + describe(in[i]);
  text += " ->";
  for (const TensorRef& o : out) text += " " + describe(o);
  return internal_error(text);
}

bool all_f32(std::span<const TensorRef> in, std::span<TensorRef> out) {
  for (const TensorRef& t : in)
    if (t.dtype != DType::kF32 || t.rank < 2) return false;
  for (const TensorRef& t : out)
    if (t.dtype != DType::kF32) return false;
  return true;
}

// ---- inv, solve ---------------------------------------------------------------------

Status run_solve(const KernelContext& ctx, const ops::Attrs&, std::span<const TensorRef> in,
                 std::span<TensorRef> out) {
  const bool inv = in.size() == 1;
  const ops::OpId op = inv ? ops::OpId::Inv : ops::OpId::Solve;
  if (out.size() != 1 || !all_f32(in, out)) return bad_operands(op, in, out);
  const Stack sa = stack_of(in[0]);
  const TensorRef& rhs = inv ? in[0] : in[1];
  const Stack sb = stack_of(rhs);
  if (sa.rows != sa.cols || sb.count != sa.count || sb.rows != sa.rows || out[0].numel() != rhs.numel())
    return bad_operands(op, in, out);
  SG_ASSIGN_OR_RETURN(Scratch s, scratch_for(ctx, op, in));
  const int64_t n = sa.rows, k = sb.cols;
  for (int64_t m = 0; m < sa.count; ++m) {
    load(in[0].as<float>() + m * n * n, n * n, s.a);
    if (inv) {
      std::fill(s.b, s.b + n * n, 0.0);
      for (int64_t i = 0; i < n; ++i) s.b[i * n + i] = 1;
    } else {
      load(in[1].as<float>() + m * n * k, n * k, s.b);
    }
    int parity = 1;
    if (lu(s.a, n, s.piv, parity)) lu_solve(s.a, n, s.piv, s.b, k);
    else std::fill(s.b, s.b + n * k, kNaN);
    store(s.b, n * k, out[0].as<float>() + m * n * k);
  }
  return Status::Ok();
}

// ---- slogdet ------------------------------------------------------------------------

Status run_slogdet(const KernelContext& ctx, const ops::Attrs&, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  if (in.size() != 1 || out.size() != 2 || !all_f32(in, {})) return bad_operands(ops::OpId::Slogdet, in, out);
  const Stack sa = stack_of(in[0]);
  if (sa.rows != sa.cols || out[0].dtype != DType::kF32 || out[1].dtype != DType::kF32 ||
      out[0].numel() != sa.count || out[1].numel() != sa.count)
    return bad_operands(ops::OpId::Slogdet, in, out);
  SG_ASSIGN_OR_RETURN(Scratch s, scratch_for(ctx, ops::OpId::Slogdet, in));
  const int64_t n = sa.rows;
  for (int64_t m = 0; m < sa.count; ++m) {
    load(in[0].as<float>() + m * n * n, n * n, s.a);
    int parity = 1;
    lu(s.a, n, s.piv, parity);
    double sign = parity, logabs = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = s.a[i * n + i];
      if (std::isnan(d)) sign = logabs = kNaN;
      else if (d == 0) sign = 0, logabs = -std::numeric_limits<double>::infinity();
      if (std::isnan(d) || d == 0) break;
      if (d < 0) sign = -sign;
      logabs += std::log(std::fabs(d));
    }
    out[0].as<float>()[m] = float(sign);
    out[1].as<float>()[m] = float(logabs);
  }
  return Status::Ok();
}

// ---- cholesky, triangular_solve -------------------------------------------------------

// The lower Cholesky factor of the lower triangle of `a`, in place (the upper
// triangle zeroed); false where a is not positive definite.
bool cholesky(double* a, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / d;
    }
    for (int64_t c = j + 1; c < n; ++c) a[j * n + c] = 0;
  }
  return true;
}

Status run_cholesky(const KernelContext& ctx, const ops::Attrs&, std::span<const TensorRef> in,
                    std::span<TensorRef> out) {
  if (in.size() != 1 || out.size() != 1 || !all_f32(in, out)) return bad_operands(ops::OpId::Cholesky, in, out);
  const Stack sa = stack_of(in[0]);
  if (sa.rows != sa.cols || out[0].numel() != in[0].numel()) return bad_operands(ops::OpId::Cholesky, in, out);
  SG_ASSIGN_OR_RETURN(Scratch s, scratch_for(ctx, ops::OpId::Cholesky, in));
  const int64_t n = sa.rows;
  for (int64_t m = 0; m < sa.count; ++m) {
    load(in[0].as<float>() + m * n * n, n * n, s.a);
    if (!cholesky(s.a, n)) std::fill(s.a, s.a + n * n, kNaN);
    store(s.a, n * n, out[0].as<float>() + m * n * n);
  }
  return Status::Ok();
}

// Solves t x = b (t the lower or upper triangle of a) for the n x k b, in place.
void triangular_solve(const double* a, int64_t n, bool lower, double* b, int64_t k) {
  for (int64_t step = 0; step < n; ++step) {
    const int64_t i = lower ? step : n - 1 - step;
    const int64_t j0 = lower ? 0 : i + 1, j1 = lower ? i : n;
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t c = 0; c < k; ++c) b[i * k + c] -= a[i * n + j] * b[j * k + c];
    for (int64_t c = 0; c < k; ++c) b[i * k + c] /= a[i * n + i];
  }
}

Status run_triangular_solve(const KernelContext& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in,
                            std::span<TensorRef> out) {
  const ops::OpId op = ops::OpId::TriangularSolve;
  if (in.size() != 2 || out.size() != 1 || !all_f32(in, out) || attrs.values.empty()) return bad_operands(op, in, out);
  const Stack sa = stack_of(in[0]), sb = stack_of(in[1]);
  if (sa.rows != sa.cols || sb.count != sa.count || sb.rows != sa.rows || out[0].numel() != in[1].numel())
    return bad_operands(op, in, out);
  SG_ASSIGN_OR_RETURN(Scratch s, scratch_for(ctx, op, in));
  const bool lower = attrs.i(ops::attr::kTriangularLower) != 0;
  const int64_t n = sa.rows, k = sb.cols;
  for (int64_t m = 0; m < sa.count; ++m) {
    load(in[0].as<float>() + m * n * n, n * n, s.a);
    load(in[1].as<float>() + m * n * k, n * k, s.b);
    triangular_solve(s.a, n, lower, s.b, k);
    store(s.b, n * k, out[0].as<float>() + m * n * k);
  }
  return Status::Ok();
}

// ---- qr -----------------------------------------------------------------------------

// Householder QR of the rows x cols `a` in place (LAPACK geqr2): r in the upper
// triangle, the reflectors' vectors below it (their leading 1 implied), tau[j].
void householder(double* a, int64_t rows, int64_t cols, double* tau) {
  const int64_t k = std::min(rows, cols);
  for (int64_t j = 0; j < k; ++j) {
    double xnorm = 0;
    for (int64_t i = j + 1; i < rows; ++i) xnorm = std::hypot(xnorm, a[i * cols + j]);
    const double alpha = a[j * cols + j];
    tau[j] = 0;
    if (xnorm == 0) continue;  // H = I, as LAPACK's larfg
    const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau[j] = (beta - alpha) / beta;
    const double scale = 1 / (alpha - beta);
    for (int64_t i = j + 1; i < rows; ++i) a[i * cols + j] *= scale;
    a[j * cols + j] = beta;
    for (int64_t c = j + 1; c < cols; ++c) {  // H a[j:, c]
      double w = a[j * cols + c];
      for (int64_t i = j + 1; i < rows; ++i) w += a[i * cols + j] * a[i * cols + c];
      w *= tau[j];
      a[j * cols + c] -= w;
      for (int64_t i = j + 1; i < rows; ++i) a[i * cols + c] -= w * a[i * cols + j];
    }
  }
}

// q = H_0 ... H_{k-1} applied to the first k columns of the identity (rows x k).
void form_q(const double* a, int64_t rows, int64_t cols, const double* tau, double* q) {
  const int64_t k = std::min(rows, cols);
  std::fill(q, q + rows * k, 0.0);
  for (int64_t i = 0; i < k; ++i) q[i * k + i] = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    if (tau[j] == 0) continue;
    for (int64_t c = 0; c < k; ++c) {
      double w = q[j * k + c];
      for (int64_t i = j + 1; i < rows; ++i) w += a[i * cols + j] * q[i * k + c];
      w *= tau[j];
      q[j * k + c] -= w;
      for (int64_t i = j + 1; i < rows; ++i) q[i * k + c] -= w * a[i * cols + j];
    }
  }
}

Status run_qr(const KernelContext& ctx, const ops::Attrs&, std::span<const TensorRef> in, std::span<TensorRef> out) {
  if (in.size() != 1 || out.size() != 2 || !all_f32(in, out)) return bad_operands(ops::OpId::Qr, in, out);
  const Stack sa = stack_of(in[0]);
  const int64_t rows = sa.rows, cols = sa.cols, k = std::min(rows, cols);
  if (out[0].numel() != sa.count * rows * k || out[1].numel() != sa.count * k * cols)
    return bad_operands(ops::OpId::Qr, in, out);
  SG_ASSIGN_OR_RETURN(Scratch s, scratch_for(ctx, ops::OpId::Qr, in));
  for (int64_t m = 0; m < sa.count; ++m) {
    load(in[0].as<float>() + m * rows * cols, rows * cols, s.a);
    householder(s.a, rows, cols, s.b);
    form_q(s.a, rows, cols, s.b, s.c);
    store(s.c, rows * k, out[0].as<float>() + m * rows * k);
    float* r = out[1].as<float>() + m * k * cols;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t c = 0; c < cols; ++c) r[i * cols + c] = c < i ? 0.0f : float(s.a[i * cols + c]);
  }
  return Status::Ok();
}

// ---- eigh ---------------------------------------------------------------------------

// One Jacobi rotation zeroing a[p][q] of the symmetric n x n `a`, applied to v too.
void rotate(double* a, double* v, int64_t n, int64_t p, int64_t q) {
  const double apq = a[p * n + q];
  const double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
  double t = 1 / (std::fabs(theta) + std::sqrt(theta * theta + 1));
  if (std::fabs(theta) > 1e150) t = 1 / (2 * std::fabs(theta));
  if (theta < 0) t = -t;
  const double c = 1 / std::sqrt(t * t + 1), s = t * c;
  for (int64_t k = 0; k < n; ++k) {  // columns p, q
    const double kp = a[k * n + p], kq = a[k * n + q];
    a[k * n + p] = c * kp - s * kq;
    a[k * n + q] = s * kp + c * kq;
  }
  for (int64_t k = 0; k < n; ++k) {  // rows p, q
    const double pk = a[p * n + k], qk = a[q * n + k];
    a[p * n + k] = c * pk - s * qk;
    a[q * n + k] = s * pk + c * qk;
  }
  a[p * n + q] = a[q * n + p] = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double kp = v[k * n + p], kq = v[k * n + q];
    v[k * n + p] = c * kp - s * kq;
    v[k * n + q] = s * kp + c * kq;
  }
}

// Cyclic Jacobi on the symmetric a (its lower triangle mirrored): eigenvalues on
// a's diagonal, eigenvectors in v's columns. False for a non-finite input.
bool jacobi(double* a, double* v, int64_t n) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      a[j * n + i] = a[i * n + j];
      total += a[i * n + j] * a[i * n + j];
    }
  if (!std::isfinite(total)) return false;
  std::fill(v, v + n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off <= 1e-34 * total) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q)
        if (a[p * n + q] != 0) rotate(a, v, n, p, q);
  }
  return true;
}

Status run_eigh(const KernelContext& ctx, const ops::Attrs&, std::span<const TensorRef> in, std::span<TensorRef> out) {
  if (in.size() != 1 || out.size() != 2 || !all_f32(in, {})) return bad_operands(ops::OpId::Eigh, in, out);
  const Stack sa = stack_of(in[0]);
  const int64_t n = sa.rows;
  if (sa.rows != sa.cols || out[0].dtype != DType::kF32 || out[1].dtype != DType::kF32 ||
      out[0].numel() != sa.count * n || out[1].numel() != in[0].numel())
    return bad_operands(ops::OpId::Eigh, in, out);
  SG_ASSIGN_OR_RETURN(Scratch s, scratch_for(ctx, ops::OpId::Eigh, in));
  for (int64_t m = 0; m < sa.count; ++m) {
    load(in[0].as<float>() + m * n * n, n * n, s.a);
    float* w = out[0].as<float>() + m * n;
    float* vec = out[1].as<float>() + m * n * n;
    if (!jacobi(s.a, s.c, n)) {
      std::fill(w, w + n, float(kNaN));
      std::fill(vec, vec + n * n, float(kNaN));
      continue;
    }
    // Ascending, ties in their order; piv holds the order.
    std::iota(s.piv, s.piv + n, int64_t(0));
    std::stable_sort(s.piv, s.piv + n, [&](int64_t x, int64_t y) { return s.a[x * n + x] < s.a[y * n + y]; });
    for (int64_t j = 0; j < n; ++j) {
      const int64_t col = s.piv[j];
      w[j] = float(s.a[col * n + col]);
      int64_t big = 0;
      for (int64_t i = 1; i < n; ++i)
        if (std::fabs(s.c[i * n + col]) > std::fabs(s.c[big * n + col])) big = i;
      const double flip = s.c[big * n + col] < 0 ? -1 : 1;
      for (int64_t i = 0; i < n; ++i) vec[i * n + j] = float(flip * s.c[i * n + col]);
    }
  }
  return Status::Ok();
}

}  // namespace

size_t linalg_scratch_size(ops::OpId op, std::span<const TensorRef> inputs) {
  return size_t(need_of(op, inputs).bytes());
}

KernelFn linalg_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Inv: SG_RETURN_IF_SELECTED(Inv, run_solve);
    case ops::OpId::Solve: SG_RETURN_IF_SELECTED(Solve, run_solve);
    case ops::OpId::Slogdet: SG_RETURN_IF_SELECTED(Slogdet, run_slogdet);
    case ops::OpId::Cholesky: SG_RETURN_IF_SELECTED(Cholesky, run_cholesky);
    case ops::OpId::TriangularSolve: SG_RETURN_IF_SELECTED(TriangularSolve, run_triangular_solve);
    case ops::OpId::Qr: SG_RETURN_IF_SELECTED(Qr, run_qr);
    case ops::OpId::Eigh: SG_RETURN_IF_SELECTED(Eigh, run_eigh);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
