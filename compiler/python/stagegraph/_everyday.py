"""Everyday NumPy ops of SPEC §7 in eager mode (searchsorted and cumprod, which have
their own kernels, are in _ordering.py): composites written with the op library in the order the compiler
stages them (compiler/staging/sg_ops_everyday.cc, sg_einsum.cc), so eager and
compiled compute the same ops and differentiate through them: logaddexp, diff,
flip, roll, meshgrid, outer, einsum, isclose, allclose."""

import math
import operator

import numpy as np

from . import _dtypes as dt
from ._creation import arange
from ._elementwise import abs as _abs
from ._elementwise import exp, isnan, log, logical_and, logical_or, maximum, where
from ._linalg import matmul
from ._reduction import _kernel_axes
from ._reduction import all as _all
from ._reduction import sum as _sum
from ._shape import broadcast_to, concatenate, expand_dims, reshape, transpose
from ._tensor import Tensor, astype, is_py_scalar, to_tensor


def _float(v):
    """A tensor operand as float (ints and bools as f32); Python numbers stay numbers."""
    if is_py_scalar(v):
        return v
    t = to_tensor(v)
    return t if t.dtype.is_float else astype(t, dt.f32)


def _operands(a, b):
    """(x, y): x a tensor, y a tensor or a Python number; int and bool tensors as f32.
    A number x takes y's dtype, as beside a tensor (SPEC §3)."""
    y = _float(b)
    if not is_py_scalar(a):
        return _float(a), y
    if not is_py_scalar(y):
        return to_tensor(a, like=y), y
    return _float(to_tensor(a)), y


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) without overflow (NumPy's): x1 + log 2 where x1 == x2,
    else max + log(1 + exp(-|x1 - x2|)). Ints and bools give f32."""
    x, y = _operands(x1, x2)
    m = maximum(x, y)
    e = exp(-_abs(x - y))
    general = m + log(e + 1.0)
    return where(x == y, x + math.log(2.0), general)


def _slice(x, axis, lo, hi, step=1):
    return x[(slice(None),) * axis + (slice(lo, hi, step),)]


def _axis(axis, ndim, op):
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


def _diff_edge(t, v, axis):
    e = to_tensor(v, t, what="diff")  # a number takes t's dtype as beside it (§3)
    if e.ndim != 0:
        return e
    return broadcast_to(e, tuple(1 if d == axis else n for d, n in enumerate(t.shape)))


def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The n-th differences along `axis` (NumPy's); bools give x[1:] != x[:-1].
    `prepend`/`append` are joined to x along the axis first (a number or 0-d value
    broadcast to size 1 there)."""
    t = to_tensor(x, what="diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    if t.ndim == 0:
        raise ValueError("diff: needs a tensor of rank 1 or more")
    a = _axis(axis, t.ndim, "diff")
    if n == 0:
        return t
    if prepend is not None or append is not None:
        parts = ([_diff_edge(t, prepend, a)] if prepend is not None else []) + [t]
        parts += [_diff_edge(t, append, a)] if append is not None else []
        t = concatenate(parts, axis=a)
    for _ in range(n):
        hi, lo = _slice(t, a, 1, None), _slice(t, a, None, -1)
        t = (hi != lo) if t.dtype is dt.bool_ else hi - lo
    return t


def flip(x, axis=None):
    """x reversed along `axis` (an int, a tuple, or None for every axis)."""
    t = to_tensor(x, what="flip")
    if t.ndim == 0:
        if axis is not None:
            raise ValueError("flip: axis is out of range for a tensor of rank 0")
        return t
    axes = range(t.ndim) if axis is None else (axis,) if not isinstance(axis, (tuple, list)) else axis
    axes = sorted({_axis(a, t.ndim, "flip") for a in axes})
    if not axes:
        return t
    return t[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(t.ndim))]


def _roll_axis(t, shift, axis):
    n = t.shape[axis]
    if n == 0:
        return t
    k = shift % n
    if k == 0:
        return t
    return concatenate([_slice(t, axis, n - k, None), _slice(t, axis, None, n - k)], axis=axis)


def roll(x, shift, axis=None):
    """x rolled by `shift` along `axis` (NumPy's; ints or tuples, broadcast together)."""
    t = to_tensor(x, what="roll")
    shifts = [operator.index(s) for s in (shift if isinstance(shift, (tuple, list)) else (shift,))]
    if axis is None:
        if len(shifts) != 1:
            raise ValueError("roll: shift must be one int when axis is None")
        return reshape(_roll_axis(reshape(t, (-1,)), shifts[0], 0), t.shape)
    axes = [operator.index(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    count = max(len(shifts), len(axes))
    if len(shifts) not in (1, count) or len(axes) not in (1, count):
        raise ValueError("roll: shift and axis must have the same length (or one of them one item)")
    total = [0] * t.ndim
    for i in range(count):
        total[_axis(axes[0 if len(axes) == 1 else i], t.ndim, "roll")] += shifts[0 if len(shifts) == 1 else i]
    for a, s in enumerate(total):
        if s:
            t = _roll_axis(t, s, a)
    return t


def meshgrid(*xs, indexing="xy"):
    """Coordinate tensors from 1-D ones (others are flattened), as a tuple;
    indexing='xy' (the default) swaps the first two output axes, 'ij' does not."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij'")
    ts = [to_tensor(x, what="meshgrid") for x in xs]
    ts = [t if t.ndim == 1 else reshape(t, (-1,)) for t in ts]
    n = len(ts)

    def position(i):
        return 1 - i if indexing == "xy" and n >= 2 and i < 2 else i
    dims = [0] * n
    for i, t in enumerate(ts):
        dims[position(i)] = t.shape[0]
    out = []
    for i, t in enumerate(ts):
        shape = [1] * n
        shape[position(i)] = -1
        out.append(broadcast_to(reshape(t, tuple(shape)), tuple(dims)))
    return tuple(out)


def outer(a, b):
    """a.ravel()[:, None] * b.ravel()[None, :] (bools: logical and)."""
    x = reshape(to_tensor(a, what="outer"), (-1, 1))
    y = reshape(to_tensor(b, what="outer"), (1, -1))
    if x.dtype is dt.bool_ and y.dtype is dt.bool_:
        return logical_and(x, y)
    return x * y


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's: |a - b| <= atol + rtol·|b| where b is finite, or a == b; with
    equal_nan, NaN == NaN too. Ints and bools compare as f32."""
    x, y = _operands(a, b)
    yt = to_tensor(y, like=x)
    within = _abs(x - y) <= atol + rtol * _abs(yt)
    finite = (yt - yt) == 0.0
    r = logical_or(logical_and(within, finite), x == y)
    if equal_nan:
        r = logical_or(r, logical_and(isnan(x), isnan(yt)))
    return r


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """all(isclose(...)): a bool scalar."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


# ---- einsum ------------------------------------------------------------------------------

_ELLIPSIS = 1000  # labels of the dims '...' stands for: _ELLIPSIS + k


def _parse(spec, ranks):
    spec = spec.replace(" ", "")
    inputs, arrow, out = spec.partition("->")
    parts = inputs.split(",")
    if len(parts) != len(ranks):
        raise ValueError(f"einsum: the subscripts name {len(parts)} operands, but {len(ranks)} were given")
    spans = []
    for k, (p, r) in enumerate(zip(parts, ranks)):
        dots = "..." in p
        letters = len(p) - (3 if dots else 0)
        if (letters > r) if dots else (letters != r):
            raise ValueError(f"einsum: operand {k} has rank {r} but its subscripts '{p}' name {letters} axes")
        spans.append(r - letters)
    widest = max(spans, default=0)
    labels, count = [], {}
    for p, sp in zip(parts, spans):
        ls, i = [], 0
        while i < len(p):
            if p.startswith("...", i):
                ls += [_ELLIPSIS + widest - sp + j for j in range(sp)]
                i += 3
                continue
            if not p[i].isalpha():
                raise ValueError(f"einsum: '{p[i]}' is not a valid subscript (letters and '...' only)")
            ls.append(ord(p[i]))
            count[ord(p[i])] = count.get(ord(p[i]), 0) + 1
            i += 1
        labels.append(ls)
    if not arrow:
        return labels, [_ELLIPSIS + j for j in range(widest)] + sorted(c for c, n in count.items() if n == 1)
    output, i, dots = [], 0, False
    while i < len(out):
        if out.startswith("...", i):
            output += [_ELLIPSIS + j for j in range(widest)]
            dots, i = True, i + 3
            continue
        c = out[i]
        if not c.isalpha():
            raise ValueError(f"einsum: '{c}' is not a valid output subscript")
        if ord(c) not in count:
            raise ValueError(f"einsum: output subscript '{c}' is not among the operands' subscripts")
        if ord(c) in output:
            raise ValueError(f"einsum: output subscript '{c}' appears more than once")
        output.append(ord(c))
        i += 1
    if not dots and widest > 0:
        raise ValueError("einsum: the operands have dims under '...' but the output subscripts have no '...'")
    return labels, output


def _sum_keep(t, axes):
    r = _sum(t, axis=tuple(axes))
    return r if r.dtype is t.dtype else astype(r, t.dtype)


def _diagonals(t, ls):
    ls = list(ls)
    p = 0
    while p < len(ls):
        q = p + 1
        while q < len(ls):
            if ls[q] != ls[p]:
                q += 1
                continue
            rank = len(ls)
            idx = arange(t.shape[p])
            sp, sq = [1] * rank, [1] * rank
            sp[p], sq[q] = -1, -1
            mask = reshape(idx, tuple(sp)) == reshape(idx, tuple(sq))
            t = _sum_keep(where(mask, t, 0), (q,))
            del ls[q]
        p += 1
    return t, ls


def _sum_out(t, ls, keep):
    axes = [i for i, l in enumerate(ls) if l not in keep]
    if not axes:
        return t, ls
    return _sum_keep(t, axes), [l for l in ls if l in keep]


def _arrange(t, ls, order):
    perm = [ls.index(l) for l in order]
    return t if perm == list(range(len(perm))) else transpose(t, tuple(perm))


def _group(t, first, last):
    return int(np.prod([t.shape[i] for i in range(first, last)], dtype=np.int64))


def _contract(a, la, b, lb, keep):
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [l for l in la if l in lb and l in keep]
    summed = [l for l in la if l in lb and l not in keep]
    a_only = [l for l in la if l not in lb]
    b_only = [l for l in lb if l not in la]
    nb, na, nc, nn = len(batch), len(a_only), len(summed), len(b_only)
    labels = batch + a_only + b_only
    if not summed:
        x, y = _arrange(a, la, batch + a_only), _arrange(b, lb, batch + b_only)
        if nn:
            x = expand_dims(x, tuple(nb + na + i for i in range(nn)))
        if na:
            y = expand_dims(y, tuple(nb + i for i in range(na)))
        return x * y, labels
    x = _arrange(a, la, batch + a_only + summed)
    y = _arrange(b, lb, batch + summed + b_only)

    def merged(t, first, n1, n2):
        if n1 == 1 and n2 == 1:
            return t
        return reshape(t, tuple(t.shape[:first]) + (_group(t, first, first + n1), _group(t, first + n1, first + n1 + n2)))
    prod = matmul(merged(x, nb, na, nc), merged(y, nb, nc, nn))
    if not (na == 1 and nn == 1):
        prod = reshape(prod, tuple(prod.shape[:nb]) + tuple(x.shape[nb:nb + na]) + tuple(y.shape[nb + nc:]))
    return prod, labels


def einsum(subscripts, *operands, optimize=False):
    """NumPy's einsum with static subscripts (implicit output and '...' included),
    computed by transposes, reshapes, matmuls, products and sums. The operands share
    one dtype, which the result keeps. optimize=False contracts left to right;
    True, 'greedy' or 'optimal' pick pairs from the subscripts alone (see _greedy_path);
    a path from np.einsum_path gives the pairs."""
    if not isinstance(subscripts, str):
        raise TypeError("einsum: the first argument must be the subscripts, a string")
    if not operands:
        raise ValueError("einsum: needs at least one operand")
    ts = [to_tensor(x, what="einsum") for x in operands]
    labels, output = _parse(subscripts, [t.ndim for t in ts])
    _check_sizes(ts, labels)
    dtype = ts[0].dtype
    for k, t in enumerate(ts[1:], 1):
        if t.dtype is not dtype:
            raise TypeError(f"einsum: operand {k} is {t.dtype.name} and operand 0 {dtype.name}; cast with astype")
    if dtype is dt.bool_:
        ts = [astype(t, dt.i64) for t in ts]
    for k in range(len(ts)):
        ts[k], labels[k] = _diagonals(ts[k], labels[k])
        keep = set(output).union(*(labels[j] for j in range(len(ts)) if j != k))
        ts[k], labels[k] = _sum_out(ts[k], labels[k], keep)
    path = _einsum_path(optimize, labels, output)
    if path is None:
        acc, la = ts[0], labels[0]
        for k in range(1, len(ts)):
            keep = set(output).union(*labels[k + 1:])
            acc, la = _contract(acc, la, ts[k], labels[k], keep)
    else:
        items = list(zip(ts, labels))
        for i, j in path:
            rest = [items[k] for k in range(len(items)) if k not in (i, j)]
            keep = set(output).union(*(l for _, l in rest))
            items = rest + [_contract(*items[i], *items[j], keep)]
        acc, la = items[0]
    acc, la = _sum_out(acc, la, set(output))
    r = _arrange(acc, la, output)
    if dtype is dt.bool_:
        return r != 0
    return r if r.dtype is dtype else astype(r, dtype)


def _einsum_path(optimize, labels, output):
    """The pairs (i, j), i < j, to contract in turn, NumPy's way: both leave the list
    and their product joins its end; None for left to right."""
    if optimize is False or optimize is None:
        return None
    if isinstance(optimize, (list, tuple)):
        if not optimize or optimize[0] != "einsum_path":
            raise ValueError("einsum: an explicit optimize path is a list that starts with 'einsum_path'")
        count, pairs = len(labels), []
        for k, p in enumerate(optimize[1:], 1):
            p = tuple(sorted(operator.index(i) for i in p))
            if len(p) == 1 and count == 1 and p[0] == 0:
                continue
            if len(p) != 2 or p[0] == p[1] or p[0] < 0 or p[1] >= count:
                raise ValueError(f"einsum: path step {k} must name two operands of the {count} left")
            pairs.append(p)
            count -= 1
        if count != 1:
            raise ValueError(f"einsum: the optimize path leaves {count} operands; it must contract them to one")
        return pairs
    if optimize is True or optimize in ("greedy", "optimal"):
        return _greedy_path([set(l) for l in labels], set(output))
    raise ValueError("einsum: optimize must be False, True, 'greedy', 'optimal' or a path from einsum_path")


def _greedy_path(ls, out):
    """Pairs chosen from the subscripts alone, so eager and compiled programs agree
    whatever the sizes: first pairs that share a subscript, then the smallest rank of
    the product, then the leftmost pair."""
    pairs = []
    while len(ls) > 1:
        best = None
        for i in range(len(ls)):
            for j in range(i + 1, len(ls)):
                others = out.union(*(ls[k] for k in range(len(ls)) if k not in (i, j)))
                res = (ls[i] | ls[j]) & others
                cost = (0 if ls[i] & ls[j] else 1, len(res), i, j)
                if best is None or cost < best[0]:
                    best = (cost, res)
        (_, _, i, j), res = best
        pairs.append((i, j))
        ls = [ls[k] for k in range(len(ls)) if k not in (i, j)] + [res]
    return pairs


def _check_sizes(ts, labels):
    seen = {}
    for k, (t, ls) in enumerate(zip(ts, labels)):
        for n, l in zip(t.shape, ls):
            if l not in seen or seen[l][0] == 1:
                seen[l] = (n, k)
                continue
            if n != seen[l][0] and (n != 1 or seen[l][1] == k):
                name = f"'...' dim {l - _ELLIPSIS}" if l >= _ELLIPSIS else f"'{chr(l)}'"
                raise ValueError(f"einsum: subscript {name} has size {n} in operand {k} but {seen[l][0]} "
                                 f"in operand {seen[l][1]}")


