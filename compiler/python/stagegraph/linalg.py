"""sg.linalg: linear algebra on stacks of matrices (SPEC §7), eager mode.

    x = sg.linalg.solve(a, b)          # a [..., n, n], b [..., n, k] or [n]
    sign, logdet = sg.linalg.slogdet(a)
    q, r = sg.linalg.qr(a)             # reduced
    w, v = sg.linalg.eigh(a)           # ascending eigenvalues

NumPy's semantics on the last two axes, the leading ones a batch (broadcast between
operands), with these choices, which the compiled graph (kernels/reference/linalg.cc)
shares:
- f32 results; int and bool operands are computed as f32, f16 is refused (NumPy's
  linalg refuses it too).
- A right-hand side of rank 1 is a vector (NumPy 2's rule); any other has shape
  [..., n, k].
- Numerical failure gives NaN rather than an error (JAX's convention): a singular
  matrix makes its inv and solve all NaN (an exact zero pivot of partial-pivoting
  LU), its slogdet (0, -inf) and det 0; a matrix that is not positive definite makes
  its cholesky all NaN. triangular_solve divides by the diagonal as it is.
- cholesky and eigh read the lower triangle (eigh's UPLO='U' the upper one).
- eigh's eigenvectors are signed so that each one's entry of largest magnitude (the
  first such) is positive; NumPy leaves the sign to LAPACK.
- det is sign * exp(logabsdet) of slogdet; norm is a composite of reductions.

Where the extension is installed each op runs the runtime's kernel (_kernels.py);
otherwise NumPy in float64, rounded once to f32. Gradients: inv, solve, det,
slogdet, triangular_solve, cholesky (the symmetric gradient, as JAX's) and norm;
qr and eigh have none (sg.grad through them is an error naming the op).
"""

import math
import operator

import numpy as np

from . import _dtypes as dt
from . import _kernels
from ._elementwise import abs as _abs
from ._elementwise import exp as _exp
from ._elementwise import sqrt as _sqrt
from ._elementwise import square as _square
from ._reduction import max as _max
from ._reduction import min as _min
from ._reduction import sum as _sum
from ._shape import broadcast_to, expand_dims, squeeze, transpose
from ._tape import defvjp, differentiable
from ._tensor import Tensor, astype, to_tensor

__all__ = ["inv", "solve", "det", "slogdet", "cholesky", "triangular_solve", "qr", "eigh", "norm"]


# ---- arguments ------------------------------------------------------------------------

def _f32(x, fn):
    t = to_tensor(x, what=fn)
    if t.dtype is dt.f16:
        raise TypeError(f"{fn}: f16 is not supported (NumPy's linalg has no f16 either); cast with astype(sg.f32)")
    return t if t.dtype is dt.f32 else astype(t, dt.f32)


def _matrix(x, fn, square=True):
    t = _f32(x, fn)
    if t.ndim < 2:
        raise ValueError(f"{fn}: expects a matrix or a stack of matrices (rank 2 or more), "
                         f"got {dt.describe(t.dtype, t.shape)}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ValueError(f"{fn}: expects square matrices (the last two dims equal), got {dt.describe(t.dtype, t.shape)}")
    return t


def _rhs(a, b, fn):
    """(a, b as [..., n, k], whether b was a vector), batch dims broadcast."""
    b = _f32(b, fn)
    if b.ndim == 0:
        raise ValueError(f"{fn}: the right-hand side must have rank 1 or more, got {dt.describe(b.dtype, b.shape)}")
    vector = b.ndim == 1
    b2 = expand_dims(b, 1) if vector else b
    if b2.shape[-2] != a.shape[-1]:
        raise ValueError(f"{fn}: {dt.describe(a.dtype, a.shape)} and {dt.describe(b.dtype, b.shape)} do not fit: "
                         f"the right-hand side's {'length' if vector else 'rows (its second-to-last dim)'} "
                         "must equal the matrix's size")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"{fn}: the batch dims of {dt.describe(a.dtype, a.shape)} and "
                         f"{dt.describe(b.dtype, b.shape)} do not broadcast") from None
    if a.shape[:-2] != batch:
        a = broadcast_to(a, batch + a.shape[-2:])
    if b2.shape[:-2] != batch:
        b2 = broadcast_to(b2, batch + b2.shape[-2:])
    return a, b2, vector


# ---- NumPy's side (float64, rounded once) ------------------------------------------------

def _per_matrix(fn, a, *rest, fail_shape=None):
    """fn over each matrix of the stack a (and the matching ones of rest); a matrix
    where NumPy raises LinAlgError gives NaN of `fail_shape` (fn's result's shape)."""
    try:
        with np.errstate(all="ignore"):
            return fn(a, *rest)
    except np.linalg.LinAlgError:
        pass
    batch = a.shape[:-2]
    out = None
    for i in np.ndindex(*batch):
        try:
            with np.errstate(all="ignore"):
                r = fn(a[i], *(x[i] for x in rest))
        except np.linalg.LinAlgError:
            r = np.full(fail_shape(a[i], *(x[i] for x in rest)), np.nan)
        if out is None:
            out = np.empty(batch + r.shape)
        out[i] = r
    return out


def _np_triangular(a, b, lower):
    """Forward (backward) substitution over the stacks, dividing by the diagonal as it is."""
    n = a.shape[-1]
    x = b.copy()
    with np.errstate(all="ignore"):
        for step in range(n):
            i = step if lower else n - 1 - step
            lo, hi = (0, i) if lower else (i + 1, n)
            if hi > lo:
                x[..., i, :] -= np.einsum("...j,...jk->...k", a[..., i, lo:hi], x[..., lo:hi, :])
            x[..., i, :] /= a[..., i, i][..., None]
    return x


def _sign_vectors(v):
    """Each column's largest-magnitude entry (the first such) made positive."""
    if v.shape[-2] == 0:
        return v
    big = np.argmax(np.abs(v), axis=-2)[..., None, :]
    flip = np.where(np.take_along_axis(v, big, axis=-2) < 0, -1.0, 1.0)
    return v * flip


def _f64(t):
    return t._a.astype(np.float64)


def _out(r):
    return Tensor(np.asarray(r).astype(np.float32))


# ---- the ops ---------------------------------------------------------------------------

@differentiable("inv")
def _inv(a):
    r = _kernels.run("inv", (a._a,))
    if r is not None:
        return Tensor(r)
    return _out(_per_matrix(np.linalg.inv, _f64(a), fail_shape=lambda m: m.shape))


@differentiable("solve")
def _solve(a, b):
    r = _kernels.run("solve", (a._a, b._a))
    if r is not None:
        return Tensor(r)
    return _out(_per_matrix(np.linalg.solve, _f64(a), _f64(b), fail_shape=lambda m, y: y.shape))


@differentiable("triangular_solve")
def _triangular_solve(a, b, lower):
    r = _kernels.run("triangular_solve", (a._a, b._a), (("lower", int(lower)),))
    if r is not None:
        return Tensor(r)
    return _out(_np_triangular(_f64(a), _f64(b), lower))


@differentiable("slogdet")
def _slogdet(a):
    r = _kernels.run("slogdet", (a._a,))
    if r is not None:
        return Tensor(r[0]), Tensor(r[1])
    with np.errstate(all="ignore"):
        sign, logabs = np.linalg.slogdet(_f64(a))
    return _out(sign), _out(logabs)


@differentiable("cholesky")
def _cholesky(a):
    r = _kernels.run("cholesky", (a._a,))
    if r is not None:
        return Tensor(r)
    return _out(_per_matrix(np.linalg.cholesky, _f64(a), fail_shape=lambda m: m.shape))


@differentiable("qr")
def _qr(a):
    r = _kernels.run("qr", (a._a,))
    if r is not None:
        return Tensor(r[0]), Tensor(r[1])
    x = _f64(a)
    m, n = x.shape[-2:]
    k = min(m, n)
    q = np.empty(x.shape[:-2] + (m, k))
    rr = np.empty(x.shape[:-2] + (k, n))
    for i in np.ndindex(*x.shape[:-2]):
        q[i], rr[i] = np.linalg.qr(x[i], mode="reduced")
    return _out(q), _out(rr)


@differentiable("eigh")
def _eigh(a):
    r = _kernels.run("eigh", (a._a,))
    if r is not None:
        return Tensor(r[0]), Tensor(r[1])
    x = _f64(a)
    if not np.all(np.isfinite(np.tril(x))):  # as the kernel: NaN for a non-finite matrix
        bad = ~np.all(np.isfinite(np.tril(x)), axis=(-2, -1))
        x = np.where(bad[..., None, None], 0.0, x)
    else:
        bad = np.zeros(x.shape[:-2], bool)
    w, v = np.linalg.eigh(x, UPLO="L")
    v = _sign_vectors(v)
    w = np.where(bad[..., None], np.nan, w)
    v = np.where(bad[..., None, None], np.nan, v)
    return _out(w), _out(v)


# ---- the public functions --------------------------------------------------------------

def inv(a):
    """The inverse of each square matrix of a [..., n, n]."""
    return _inv(_matrix(a, "sg.linalg.inv"))


def solve(a, b):
    """x with a @ x = b: a [..., n, n], b [..., n, k] (or [n], a vector)."""
    a = _matrix(a, "sg.linalg.solve")
    a, b, vector = _rhs(a, b, "sg.linalg.solve")
    x = _solve(a, b)
    return squeeze(x, -1) if vector else x


def triangular_solve(a, b, lower=False):
    """solve with the lower (lower=True) or upper triangle of a, the rest of a unread
    (scipy.linalg.solve_triangular's lower=)."""
    a = _matrix(a, "sg.linalg.triangular_solve")
    a, b, vector = _rhs(a, b, "sg.linalg.triangular_solve")
    x = _triangular_solve(a, b, bool(lower))
    return squeeze(x, -1) if vector else x


def slogdet(a):
    """(sign, logabsdet) of each matrix of a [..., n, n]: det = sign * exp(logabsdet)."""
    return _slogdet(_matrix(a, "sg.linalg.slogdet"))


def det(a):
    """The determinant of each matrix of a [..., n, n] (slogdet's sign * exp(logabsdet))."""
    sign, logabs = _slogdet(_matrix(a, "sg.linalg.det"))
    return sign * _exp(logabs)


def cholesky(a):
    """The lower Cholesky factor of each matrix of a [..., n, n] (its lower triangle read)."""
    return _cholesky(_matrix(a, "sg.linalg.cholesky"))


def qr(a, mode="reduced"):
    """(q [..., m, k], r [..., k, n]), k = min(m, n): the reduced QR (LAPACK's signs)."""
    if mode != "reduced":
        raise ValueError(f"sg.linalg.qr: only mode='reduced' is supported, got {mode!r}")
    return _qr(_matrix(a, "sg.linalg.qr", square=False))


def eigh(a, UPLO="L"):  # noqa: N803 - NumPy's name
    """(w [..., n] ascending, v [..., n, n]) of the symmetric matrices of a, from the
    lower triangle (UPLO='U': the upper one)."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"sg.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    a = _matrix(a, "sg.linalg.eigh")
    if UPLO == "U":
        a = transpose(a, tuple(range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2))
    return _eigh(a)


def _ord_number(ord, fn):  # noqa: A002 - NumPy's name
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{fn}: a vector's ord must be a number, got {ord!r}")
    return float(ord)


def _vector_norm(x, ord, axis, keepdims, fn):  # noqa: A002
    if ord is None:
        return _sqrt(_sum(_square(x), axis=axis, keepdims=keepdims))
    p = _ord_number(ord, fn)
    mag = _abs(x)
    if math.isinf(p):
        return (_max if p > 0 else _min)(mag, axis=axis, keepdims=keepdims)
    if p == 0:
        return _sum(astype(x != 0, x.dtype), axis=axis, keepdims=keepdims)
    if p == 1:
        return _sum(mag, axis=axis, keepdims=keepdims)
    if p == 2:
        return _sqrt(_sum(_square(x), axis=axis, keepdims=keepdims))
    return _sum(mag ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _matrix_norm(x, ord, r, c, keepdims, fn):  # noqa: A002
    if ord is None or (isinstance(ord, str) and ord == "fro"):
        return _sqrt(_sum(_square(x), axis=(r, c), keepdims=keepdims))
    p = None if isinstance(ord, (str, bool)) or not isinstance(ord, (int, float)) else float(ord)
    if p is None or not (abs(p) == 1 or math.isinf(p)):
        raise ValueError(f"{fn}: matrix ord {ord!r} is not supported ('fro', 1, -1, inf and -inf are; "
                         "2, -2 and 'nuc' need singular values)")
    summed, other = (c, r) if math.isinf(p) else (r, c)
    sums = _sum(_abs(x), axis=summed, keepdims=True)
    return (_max if p > 0 else _min)(sums, axis=other if keepdims else (r, c), keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """NumPy's norm: the 2-norm of the flattened x (ord and axis None), a vector norm
    along one axis (ord None/2, 1, inf, -inf, 0 or any p), a matrix norm over two
    ('fro', 1, -1, inf, -inf). Ints and bools give f32."""
    fn = "sg.linalg.norm"
    t = to_tensor(x, what=fn)
    if not t.dtype.is_float:
        t = astype(t, dt.f32)
    if axis is None:
        if ord is None:
            return _sqrt(_sum(_square(t), keepdims=keepdims))
        if t.ndim == 1:
            return _vector_norm(t, ord, 0, keepdims, fn)
        if t.ndim == 2:
            return _matrix_norm(t, ord, 0, 1, keepdims, fn)
        raise ValueError(f"{fn}: an ord needs axis= for a tensor of rank {t.ndim} ({dt.describe(t.dtype, t.shape)})")
    axes = tuple(_axis(a, t, fn) for a in (tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)))
    if len(axes) == 1:
        return _vector_norm(t, ord, axes[0], keepdims, fn)
    if len(axes) != 2:
        raise ValueError(f"{fn}: axis must be an int or a pair of ints")
    if axes[0] == axes[1]:
        raise ValueError(f"{fn}: the two axes of a matrix norm must differ")
    return _matrix_norm(t, ord, axes[0], axes[1], keepdims, fn)


def _axis(a, t, fn):
    a = operator.index(a)
    if not -t.ndim <= a < t.ndim:
        raise ValueError(f"{fn}: axis {a} is out of range for a tensor of rank {t.ndim}")
    return a % t.ndim


# ---- gradients (SPEC §11; the staged rules are compiler/staging/autodiff_linalg.cc) -------

def _mT(x):
    return transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def _triangle(n, diagonal, lower):
    """[n, n] f32: 1 strictly below (lower) or above the diagonal, `diagonal` on it."""
    i = np.arange(n)
    strict = (i[:, None] > i[None, :]) if lower else (i[:, None] < i[None, :])
    return Tensor((strict + diagonal * (i[:, None] == i[None, :])).astype(np.float32))


def _inv_rule(g, out, a):
    xt = _mT(out)
    return -(xt @ g @ xt)


def _solve_a(g, out, a, b):
    return -(_solve(_mT(a), g) @ _mT(out))


def _solve_b(g, out, a, b):
    return _solve(_mT(a), g)


def _tri_a(g, out, a, b, lower):
    gb = _triangular_solve(_mT(a), g, not lower)
    return -(gb @ _mT(out)) * _triangle(a.shape[-1], 1.0, lower)


def _tri_b(g, out, a, b, lower):
    return _triangular_solve(_mT(a), g, not lower)


def _slogdet_rule(g, out, a):
    return expand_dims(g[1], (-2, -1)) * _mT(_inv(a))


def _cholesky_rule(g, out, a):
    lt = _mT(out)
    p = (lt @ g) * _triangle(a.shape[-1], 0.5, True)
    y = _triangular_solve(lt, p, False)
    z = _mT(_triangular_solve(lt, _mT(y), False))
    return (z + _mT(z)) * 0.5


defvjp("inv", a=_inv_rule)
defvjp("solve", a=_solve_a, b=_solve_b)
defvjp("triangular_solve", a=_tri_a, b=_tri_b)
defvjp("slogdet", a=_slogdet_rule)
defvjp("cholesky", a=_cholesky_rule)
