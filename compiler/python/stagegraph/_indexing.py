"""The indexing family (SPEC §7): sg.take, its gradient and the gathers along an
axis (take_along_axis and its transpose, the gradients of sort and topk), and
boolean selection: sg.nonzero (and sg.where(cond)), sg.flatnonzero and
sg.compress, whose result length only the values decide (a dim known at run time
in a compiled graph). Indexing with a tensor or a mask is Tensor.__getitem__."""

import operator

import numpy as np

from ._tape import differentiable
from ._tensor import Tensor, to_tensor


def flatnonzero(x):
    """The C-order positions (i64) of x's nonzero elements."""
    t = to_tensor(x, what="flatnonzero")
    return Tensor(np.flatnonzero(t._a).astype(np.int64))


def nonzero(x):
    """A tuple of i64 vectors, one per axis: the positions of x's nonzero elements."""
    t = to_tensor(x, what="nonzero")
    if t.ndim == 0:
        raise ValueError("nonzero: a 0-d tensor has no axes to give positions along (NumPy refuses it too); "
                         "use sg.flatnonzero(sg.reshape(x, (1,)))")
    return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(t._a))


def compress(condition, a, axis=None):
    """a's items along `axis` (None: of the flattened a) where the 1-d condition
    is nonzero; a True past the end of the axis is an IndexError, as NumPy's."""
    c = to_tensor(condition, what="compress")
    if c.ndim != 1:
        raise ValueError(f"compress: the condition must be 1-d, got shape {list(c.shape)}; "
                         "select with a boolean index x[mask] or sg.where(mask)")
    t = to_tensor(a, what="compress")
    if axis is None:
        t, axis = t.reshape(-1), 0
    axis = operator.index(axis)
    return take(t, flatnonzero(c), axis=axis)


@differentiable("take")
def take(x, idx, axis=0):
    """Gathers along `axis`; indices are ints of either width, -n <= i < n."""
    t = to_tensor(x, what="take")
    i = to_tensor(idx, what="take")
    if not i.dtype.is_int:
        raise TypeError(f"take: indices must be i32 or i64, not {i.dtype.name}")
    if axis is None:
        a, axis = t._a.reshape(-1), 0
    else:
        a, axis = t._a, operator.index(axis)
    if not -a.ndim <= axis < max(a.ndim, 1) or a.ndim == 0:
        raise ValueError(f"take: axis {axis} is out of range for shape {list(t.shape)}")
    n = a.shape[axis]
    bad = (i._a < -n) | (i._a >= n)
    if np.any(bad):
        first = int(np.asarray(i._a)[bad].flat[0])
        raise IndexError(f"take: index {first} is out of range for axis {axis} of size {n}")
    return Tensor(np.take(a, i._a, axis=axis))


# ---- gathers and their transposes (the gradients of take, sort and topk) ---------------

def _work(dtype):
    """Sums of f32 accumulate in f64, of f16 in f32, rounded once."""
    return np.float64 if dtype == np.float32 else np.float32 if dtype == np.float16 else dtype


@differentiable("take_grad")
def take_grad(g, idx, axis, n):
    """The transpose of take(x, idx, axis) for an x with n elements along `axis`:
    g added into zeros at the taken positions (repeated indices accumulate)."""
    a, i = g._a, to_tensor(idx, what="take")._a
    shape = a.shape[:axis] + (n,) + a.shape[axis + i.ndim:]
    out = np.zeros(shape, _work(a.dtype))
    np.add.at(out, (slice(None),) * axis + (i,), a)
    return Tensor(out.astype(a.dtype))


@differentiable("gather_along")
def gather_along(x, idx, axis):
    """np.take_along_axis(x, idx, axis)."""
    return Tensor(np.take_along_axis(x._a, to_tensor(idx)._a, axis))


@differentiable("scatter_along")
def scatter_along(u, idx, axis, n):
    """The transpose of gather_along: u added into zeros with n elements along
    `axis`, at the positions idx (u's shape) names."""
    a, i = u._a, to_tensor(idx)._a
    out = np.zeros(a.shape[:axis] + (n,) + a.shape[axis + 1:], _work(a.dtype))
    index = list(np.indices(i.shape, sparse=True))
    index[axis] = i
    np.add.at(out, tuple(index), a)
    return Tensor(out.astype(a.dtype))
