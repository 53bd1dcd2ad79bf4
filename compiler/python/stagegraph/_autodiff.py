"""Reverse-mode differentiation in eager mode (SPEC §11): sg.grad, sg.value_and_grad,
sg.vjp, sg.stop_gradient, sg.checkpoint, and the VJP rules of the op library.

    loss_grad = sg.grad(loss, argnums=(0, 1))
    gw, gb = loss_grad(w, b, x, y)

The recording is stagegraph/_tape.py's: the arguments being differentiated are
traced, every op on a traced value records itself, and the backward pass runs the
rules below from the result back to the arguments. Python control flow (loops with
data-dependent trip counts, branches, recursion) needs nothing: only the ops that
ran are recorded. The rules are written with the op library, so the backward pass
is itself differentiable (sg.grad of sg.grad).

Ties: max/min reductions split the gradient evenly among the maximal (minimal)
elements, maximum/minimum (and clip at a bound) give half to each side, as JAX
does; max_pool2d gives a window's gradient to its first maximal cell in row-major
order (XLA's select-and-scatter). relu, abs and sign have gradient 0 at 0; floor,
ceil, round, sign, comparisons, integer ops, argmax/argmin/argsort, sort and topk
indices, where's condition, one_hot, creation ops and random draws have none.
"""

import functools
import math
import operator

import numpy as np

from . import _staging
from ._dtypes import describe
from ._elementwise import cos, exp, log, maximum, normal_cdf, rsqrt, sign, sin, where
from ._linalg import matmul
from ._indexing import gather_along, scatter_along, take, take_grad
from ._nn import (avg_pool2d, avg_pool2d_grad, conv2d, conv2d_filter_grad, conv2d_input_grad,
                  max_pool2d_grad, max_pool2d_select)
from ._ordering import argsort
from ._ordering import cumprod as _cumprod_op
from ._ordering import cumsum as _cumsum_op
from ._reduction import mean as _mean
from ._reduction import prod as _prod_op
from ._reduction import sum as _sum
from ._shape import broadcast_to, concatenate, reshape, split, transpose
from ._tape import backward, defvjp, is_traced, leaf, live, new_level, unbox
from ._tensor import Tensor, _advanced_key, from_numpy, getitem_grad, is_py_scalar, setitem, to_tensor
from ._tree import leaves, tree_map

__all__ = ["grad", "value_and_grad", "vjp", "stop_gradient", "checkpoint"]


# ---- the API --------------------------------------------------------------------------------

def grad(f, argnums=0, has_aux=False):
    """The gradient of f, a function returning a scalar float, with respect to its
    positional argument(s) `argnums` (an int, or a tuple: then a tuple of gradients).
    Each gradient has its argument's structure, shape and dtype. With has_aux, f
    returns (value, aux) and the function returns (gradient, aux)."""
    vg = _value_and_grad(f, argnums, has_aux, "sg.grad")

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


def value_and_grad(f, argnums=0, has_aux=False):
    """Like grad, but returns (value, gradient); with has_aux ((value, aux), gradient)."""
    return _value_and_grad(f, argnums, has_aux, "sg.value_and_grad")


def vjp(f, *primals, has_aux=False):
    """(f(*primals), pullback): pullback(cotangent), the cotangent of f's result's
    structure, returns a tuple with the cotangent of each primal. With has_aux, f
    returns (result, aux) and vjp returns (result, pullback, aux)."""
    with new_level() as level:
        traced, slots = zip(*(_trace(p, level, "sg.vjp", i) for i, p in enumerate(primals))) \
            if primals else ((), ())
        result = _call(f, traced, {})
        out, aux = _split_aux(result, has_aux, "sg.vjp")
        outs = leaves(out)
        traces = [live(v)._t if is_traced(v, level) else None for v in outs]
        out = _untrace(out, level)
        aux = _untrace(aux, level)

    def pullback(cotangent):
        cts = leaves(cotangent)
        if len(cts) != len(outs):
            raise TypeError(f"sg.vjp: the cotangent has {len(cts)} value(s) but the result has "
                            f"{len(outs)}; give one of the result's structure")
        seeds = []
        for value, ct, trace in zip(outs, cts, traces):
            if trace is None or ct is None:
                continue
            seeds.append((trace, _cotangent(ct, value, "sg.vjp")))
        nodes = [n for s in slots for n in s if n is not None]
        found = dict(zip(map(id, nodes), backward(seeds, nodes)))
        return tuple(_gradient(p, s, found) for p, s in zip(primals, slots))

    return (out, pullback, aux) if has_aux else (out, pullback)


def stop_gradient(x):
    """x (a tensor or a structure of them) as a constant: no gradient flows through it."""
    return tree_map(lambda v, _: Tensor(v._a) if isinstance(v, Tensor) else v, x)


def checkpoint(f, segment=None):
    """f, whose inner values the compiled backward pass recomputes instead of keeping;
    a loop calling it keeps one state per segment of `segment` iterations (None: about
    sqrt(T) of them). In eager mode it is f itself: the numbers are the same."""
    if segment is not None and (isinstance(segment, bool) or not isinstance(segment, int) or segment < 1):
        raise TypeError("sg.checkpoint's segment must be a positive int known when the program is compiled "
                        "(the iterations between the states a loop keeps), or None for about sqrt(T) of them")
    @functools.wraps(f)
    def checkpointed(*args, **kwargs):
        return f(*args, **kwargs)
    return checkpointed


# ---- the machinery behind them --------------------------------------------------------------

def _argnums(argnums, nargs, name):
    single = not isinstance(argnums, (tuple, list))
    nums = []
    for i in (argnums,) if single else argnums:
        i = operator.index(i)
        if not -nargs <= i < nargs:
            raise TypeError(f"{name}: argnums {i} is out of range for {nargs} positional argument(s)")
        nums.append(i % nargs)
    return nums, single


def _value_and_grad(f, argnums, has_aux, name):
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), name)
        with new_level() as level:
            traced, slots = list(args), {}
            for i in nums:
                traced[i], slots[i] = _trace(args[i], level, name, i)
            result = _call(f, traced, kwargs)
            value, aux = _split_aux(result, has_aux, name)
            value = _scalar_result(value, name)
            seeds = [(live(value)._t, Tensor(np.ones((), value._a.dtype)))] if is_traced(value, level) else []
            nodes = [n for i in nums for n in slots[i] if n is not None]
            found = dict(zip(map(id, nodes), backward(seeds, nodes)))
            value = unbox(value, level)
            aux = _untrace(aux, level)
        grads = tuple(_gradient(args[i], slots[i], found) for i in nums)
        g = grads[0] if single else grads
        return ((value, aux) if has_aux else value), g
    return value_and_grad_f


def _call(f, args, kwargs):
    # An @sg.function called by f is a plain call here, its values traced.
    with _staging.inside_body():
        return f(*args, **kwargs)


def _split_aux(result, has_aux, name):
    if not has_aux:
        return result, None
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError(f"{name}: with has_aux=True the function must return a pair (value, aux), "
                        f"got {type(result).__name__}")
    return result[0], result[1]


def _untrace(tree, level):
    if tree is None:
        return None
    return tree_map(lambda v, _: unbox(v, level) if isinstance(v, Tensor) else v, tree)


def _trace(value, level, name, argno):
    """(value with its float leaves traced at `level`, their nodes: one per leaf, None
    for the leaves left as they are)."""
    nodes = []

    def start(v, path):
        where = f"argument {argno}" + (f" at {path}" if path else "")
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name}: {where} is a bool; differentiate with respect to a float value")
        if isinstance(v, int) and not isinstance(v, np.generic):
            raise TypeError(f"{name}: {where} is a Python int; differentiate with respect to a float "
                            f"value (write {v}.0)")
        if is_py_scalar(v):
            t = Tensor(np.array(v, np.float32))
        elif isinstance(v, Tensor):
            t = v
        elif isinstance(v, (np.ndarray, np.generic)):
            t = from_numpy(v, f"{name}: {where}")
        else:  # None, strings, functions...: not differentiated, kept as they are
            nodes.append(None)
            return v
        if not t.dtype.is_float:
            kind = "dtype bool" if t.dtype.is_bool else f"integer dtype {t.dtype.name}"
            raise TypeError(f"{name}: {where} has {kind}; differentiate with respect to a float "
                            "value (cast it with .astype(sg.f32))")
        traced = leaf(t, level)
        nodes.append(traced._t.node)
        return traced

    return tree_map(start, value), nodes


def _gradient(value, nodes, found):
    """The gradient of `value` (an argument) with the cotangents `found` of its leaves."""
    it = iter(nodes)

    def pick(v, _):
        node = next(it)
        if node is None:
            return v
        g = found.get(id(node))
        if g is None:
            shape, dtype = node.avals[0]
            return Tensor(np.zeros(shape, dtype))
        return g
    return tree_map(pick, value)


def _scalar_result(value, name):
    if is_py_scalar(value) and isinstance(value, float):
        return Tensor(np.array(value, np.float32))
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        t = value if isinstance(value, Tensor) else from_numpy(value)
        if t.ndim == 0 and t.dtype.is_float:
            return t
        got = describe(t.dtype, t.shape)
    else:
        got = type(value).__name__
    raise TypeError(f"{name}: the function must return a scalar float (f32[] or f16[]), got {got}; "
                    "use sg.vjp for other results")


def _cotangent(ct, value, name):
    t = to_tensor(ct, what=name)
    if not isinstance(value, Tensor):
        return t
    if t.shape != value.shape:
        raise TypeError(f"{name}: a cotangent of shape {describe(t.dtype, t.shape)} for a result of "
                        f"shape {describe(value.dtype, value.shape)}")
    return t if t.dtype is value.dtype else t.astype(value.dtype)


# ---- helpers of the rules ------------------------------------------------------------------

def _shape(v):
    return tuple(np.shape(v._a if isinstance(v, Tensor) else v))


def _unbroadcast(g, shape):
    """g summed down to `shape`, the shape of an operand broadcast to g's."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return reshape(_sum(g, axis=axes) if axes else g, shape)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(operator.index(a) % max(ndim, 1) for a in items))


def _kept(g, ndim, axis, keepdims):
    """g (a reduction's result) with the reduced axes back as 1s."""
    if keepdims:
        return g
    shape = list(g.shape)
    for a in _axes(axis, ndim):
        shape.insert(a, 1)
    return reshape(g, tuple(shape))


def _expand(g, x, axis, keepdims):
    return broadcast_to(_kept(g, x.ndim, axis, keepdims), x.shape)


def _flip(g, axis):
    return g[(slice(None),) * axis + (slice(None, None, -1),)]


def _half_at_ties(win, tie, g):
    """g where `win`, g/2 where `tie`, else 0 (maximum's and minimum's rule)."""
    return where(win, g, where(tie, 0.5 * g, 0))


def _mT(x):
    return transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def _none(*_args, **_kwargs):
    return None


# ---- elementwise -----------------------------------------------------------------------------

def _binary_a(g, out, op, a, b):
    if op in ("+", "-", "%"):
        r = g
    elif op == "*":
        r = g * b
    elif op == "/":
        r = g / b
    elif op == "**":
        if is_py_scalar(b):
            if b == 0:
                return None
            r = g * (b * a ** (b - 1))
        else:
            r = g * where(b == 0, 0, b * a ** (b - 1))
    else:  # //: piecewise constant
        return None
    return _unbroadcast(r, _shape(a))


def _binary_b(g, out, op, a, b):
    if op == "+":
        r = g
    elif op == "-":
        r = -g
    elif op == "*":
        r = g * a
    elif op == "/":
        r = -g * out / b
    elif op == "**":
        if is_py_scalar(a):
            r = g * out * (math.log(a) if a > 0 else 0.0 if a == 0 else math.nan)
        else:
            r = g * out * log(where(a == 0, 1, a))
    elif op == "%":
        r = -g * (a // b)
    else:
        return None
    return _unbroadcast(r, _shape(b))


def _clip_rules():
    def through_hi(g, x, lo, hi):
        m = x if lo is None else maximum(x, lo)
        return m, (g if hi is None else _half_at_ties(m < hi, m == hi, g))

    def rule_x(g, out, x, lo=None, hi=None):
        m, gm = through_hi(g, x, lo, hi)
        return _unbroadcast(gm if lo is None else _half_at_ties(x > lo, x == lo, gm), _shape(x))

    def rule_lo(g, out, x, lo=None, hi=None):
        m, gm = through_hi(g, x, lo, hi)
        return _unbroadcast(_half_at_ties(lo > x, x == lo, gm), _shape(lo))

    def rule_hi(g, out, x, lo=None, hi=None):
        m = x if lo is None else maximum(x, lo)
        return _unbroadcast(_half_at_ties(hi < m, m == hi, g), _shape(hi))
    return dict(x=rule_x, lo=rule_lo, hi=rule_hi)


_SQRT_2PI = math.sqrt(2 * math.pi)

defvjp("binary", a=_binary_a, b=_binary_b)
defvjp("negative", x=lambda g, out, x: -g)
defvjp("astype", x=lambda g, out, x, dtype: g.astype(x.dtype))
defvjp("exp", x=lambda g, out, x: g * out)
defvjp("log", x=lambda g, out, x: g / x)
defvjp("sqrt", x=lambda g, out, x: g * 0.5 / out)
defvjp("rsqrt", x=lambda g, out, x: g * -0.5 * out * out * out)
defvjp("sin", x=lambda g, out, x: g * cos(x))
defvjp("cos", x=lambda g, out, x: -g * sin(x))
defvjp("tanh", x=lambda g, out, x: g * (1 - out * out))
defvjp("sigmoid", x=lambda g, out, x: g * out * (1 - out))
defvjp("gelu", x=lambda g, out, x: g * (normal_cdf(x) + x * exp(-0.5 * x * x) / _SQRT_2PI))
defvjp("normal_cdf", x=lambda g, out, x: g * exp(-0.5 * x * x) / _SQRT_2PI)
defvjp("abs", x=lambda g, out, x: g * sign(x))
defvjp("square", x=lambda g, out, x: g * 2 * x)
for _name in ("floor", "ceil", "round", "sign"):
    defvjp(_name, x=_none)
defvjp("relu", x=lambda g, out, x: where(x > 0, g, 0))
defvjp("maximum", a=lambda g, out, a, b: _unbroadcast(_half_at_ties(a > b, a == b, g), _shape(a)),
       b=lambda g, out, a, b: _unbroadcast(_half_at_ties(b > a, a == b, g), _shape(b)))
defvjp("minimum", a=lambda g, out, a, b: _unbroadcast(_half_at_ties(a < b, a == b, g), _shape(a)),
       b=lambda g, out, a, b: _unbroadcast(_half_at_ties(b < a, a == b, g), _shape(b)))
defvjp("where", cond=_none,
       a=lambda g, out, cond, a, b: _unbroadcast(where(cond, g, 0), _shape(a)),
       b=lambda g, out, cond, a, b: _unbroadcast(where(cond, 0, g), _shape(b)))
defvjp("clip", **_clip_rules())


# ---- reductions and ordering ---------------------------------------------------------------

def _extremum(g, out, x, axis=None, keepdims=False):
    """Split evenly among the elements equal to the max (min)."""
    hit = x == _kept(out, x.ndim, axis, keepdims)
    count = _sum(hit, axis=_axes(axis, x.ndim), keepdims=True).astype(x.dtype)
    return where(hit, _kept(g, x.ndim, axis, keepdims) / count, 0)


def _prod(g, out, x, axis=None, keepdims=False):
    """The product of the other elements, exact where x has zeros."""
    axes = _axes(axis, x.ndim)
    zero = x == 0
    zeros = _sum(zero, axis=axes, keepdims=True)
    nonzero = where(zero, 1, x)
    p = _prod_op(nonzero, axis=axes, keepdims=True)
    others = where(zeros == 0, p / nonzero, where((zeros == 1) & zero, p, 0))
    return _kept(g, x.ndim, axis, keepdims) * others


def _count(x, axis):
    return int(np.prod([x.shape[a] for a in _axes(axis, x.ndim)], dtype=np.int64))


def _cumsum(g, out, x, axis=None):
    if axis is None:
        return reshape(_flip(_cumsum_op(_flip(g, 0), 0), 0), x.shape)
    a = operator.index(axis) % x.ndim
    return _flip(_cumsum_op(_flip(g, a), a), a)


def _cumprod(g, out, x, axis=None):
    """sum over j >= i of g_j times the product of x_k, k <= j, k != i; exact with
    zeros: before a lane's first zero the reverse cumsum of g*out over x, at it the
    same sum over the products with that zero left out, after it 0."""
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(_cumprod(reshape(g, (-1,)), reshape(out, (-1,)), flat, 0), x.shape)
    a = operator.index(axis) % x.ndim

    def rev_cumsum(v):
        return _flip(_cumsum_op(_flip(v, a), a), a)
    zero = x == 0.0
    zeros_so_far = _cumsum_op(zero, a)
    first_zero = zero & (zeros_so_far == 1)
    before = zeros_so_far == 0
    plain = rev_cumsum(g * out) / where(zero, 1.0, x)
    skipped = rev_cumsum(g * _cumprod_op(where(first_zero, 1.0, x), a))
    return where(before, plain, where(first_zero, skipped, 0.0))


def _sort(g, out, x, axis=-1):
    a = operator.index(axis) % x.ndim
    return scatter_along(g, argsort(x, a), a, x.shape[a])


def _topk(g, out, x, k, axis=-1):
    a = operator.index(axis) % x.ndim
    return scatter_along(g[0], out[1], a, x.shape[a])


def _logsumexp(g, out, x, axis=None, keepdims=False):
    """softmax(x) along the axes, with the max (a constant) taken out: exp(x - out)
    would carry the rounding of a large result (1000.69 in f32) into every weight."""
    axes = _axes(axis, x.ndim)
    with np.errstate(all="ignore"):
        m = np.max(x._a, axis=axes, keepdims=True, initial=-np.inf)
    e = exp(x - Tensor(np.where(np.isfinite(m), m, 0).astype(x._a.dtype)))
    return _kept(g, x.ndim, axis, keepdims) * e / _sum(e, axis=axes, keepdims=True)


defvjp("sum", x=lambda g, out, x, axis=None, keepdims=False: _expand(g, x, axis, keepdims))
defvjp("mean", x=lambda g, out, x, axis=None, keepdims=False: _expand(g, x, axis, keepdims) / _count(x, axis))
defvjp("max", x=_extremum)
defvjp("min", x=_extremum)
defvjp("prod", x=_prod)
defvjp("cumsum", x=_cumsum)
defvjp("cumprod", x=_cumprod)
defvjp("sort", x=_sort)
defvjp("topk", x=_topk)
defvjp("logsumexp", x=_logsumexp)


# ---- shape ops -------------------------------------------------------------------------------

def _transpose(g, out, x, axes=None):
    if axes is None:
        return transpose(g)
    return transpose(g, tuple(int(i) for i in np.argsort([operator.index(a) % x.ndim for a in axes])))


def _concatenate(g, out, xs, axis=0):
    sizes = [int(np.prod(_shape(v), dtype=np.int64)) if axis is None else _shape(v)[operator.index(axis)]
             for v in xs]
    parts = split(g, list(np.cumsum(sizes)[:-1]), 0 if axis is None else axis)
    return [reshape(p, _shape(v)) if axis is None else p for p, v in zip(parts, xs)]


def _stack(g, out, xs, axis=0):
    a = operator.index(axis) % g.ndim
    return [g[(slice(None),) * a + (i,)] for i in range(len(xs))]


def _tile(g, out, x, reps):
    reps = (reps,) if isinstance(reps, int) else tuple(operator.index(r) for r in reps)
    d = max(len(reps), x.ndim)
    reps, shape = (1,) * (d - len(reps)) + reps, (1,) * (d - x.ndim) + x.shape
    split_shape = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    return reshape(_sum(reshape(g, split_shape), axis=tuple(range(0, 2 * d, 2))), x.shape)


def _pad_region(x, pad_width):
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    return tuple(slice(int(b), int(b) + n) for (b, _), n in zip(widths, x.shape))


def _take(g, out, x, idx, axis=0):
    if axis is None:
        return reshape(take_grad(g, idx, 0, x.size), x.shape)
    a = operator.index(axis) % x.ndim
    return take_grad(g, idx, a, x.shape[a])


def _reshape_back(g, out, x, *_args, **_kwargs):
    return reshape(g, x.shape)


defvjp("reshape", x=_reshape_back)
defvjp("expand_dims", x=_reshape_back)
defvjp("squeeze", x=_reshape_back)
defvjp("transpose", x=_transpose)
defvjp("concatenate", xs=_concatenate)
defvjp("stack", xs=_stack)
defvjp("split", x=lambda g, out, x, indices_or_sections, axis=0: concatenate(list(g), axis))
defvjp("broadcast_to", x=lambda g, out, x, shape: _unbroadcast(g, x.shape))
defvjp("tile", x=_tile)
defvjp("pad", x=lambda g, out, x, pad_width, constant_values=None: g[_pad_region(x, pad_width)],
       constant_values=lambda g, out, x, pad_width, constant_values=None:
       _unbroadcast(_sum(g) - _sum(g[_pad_region(x, pad_width)]), _shape(constant_values)))
defvjp("take", x=_take, idx=_none)
defvjp("take_grad", g=lambda c, out, g, idx, axis, n: take(c, idx, axis), idx=_none)
defvjp("gather_along", x=lambda g, out, x, idx, axis: scatter_along(g, idx, axis, x.shape[axis]), idx=_none)
defvjp("scatter_along", u=lambda g, out, u, idx, axis, n: gather_along(g, idx, axis), idx=_none)
defvjp("getitem", x=lambda g, out, x, key: (getitem_grad(g, key, x.shape) if _advanced_key(key) else
                                             setitem(Tensor(np.zeros(x.shape, g._a.dtype)), key, g)))
defvjp("getitem_grad", g=lambda c, out, g, key, shape: c[key])
defvjp("setitem", x=lambda g, out, x, key, value: setitem(g, key, 0),
       value=lambda g, out, x, key, value: _unbroadcast(g[key], _shape(value)))


# ---- linear algebra --------------------------------------------------------------------------

def _matmul_parts(g, a, b):
    """(a, b, g) as matmul operands of rank >= 2 (1-d operands as a row, a column)."""
    a, b = to_tensor(a), to_tensor(b)
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a.ndim == 1 and b.ndim == 1:
        g2 = reshape(g, (1, 1))
    elif a.ndim == 1:
        g2 = reshape(g, g.shape[:-1] + (1,) + g.shape[-1:])
    elif b.ndim == 1:
        g2 = reshape(g, g.shape + (1,))
    else:
        g2 = g
    return a2, b2, g2


def _matmul_a(g, out, a, b):
    a2, b2, g2 = _matmul_parts(g, a, b)
    return reshape(_unbroadcast(matmul(g2, _mT(b2)), a2.shape), a.shape)


def _matmul_b(g, out, a, b):
    a2, b2, g2 = _matmul_parts(g, a, b)
    return reshape(_unbroadcast(matmul(_mT(a2), g2), b2.shape), b.shape)


def _dot_as_matmul(a, b):
    """dot(a, b) is matmul(A, B) of these reshapes when b has rank >= 2 and a rank >= 2
    (a's last axis against b's second-to-last)."""
    bt = transpose(b, (b.ndim - 2,) + tuple(range(b.ndim - 2)) + (b.ndim - 1,))
    return reshape(a, (-1, a.shape[-1])), reshape(bt, (b.shape[-2], -1))


def _dot(which):
    def rule(g, out, a, b):
        a, b = to_tensor(a), to_tensor(b)
        if a.ndim == 0 or b.ndim == 0:
            return _binary_a(g, out, "*", a, b) if which == "a" else _binary_b(g, out, "*", a, b)
        if a.ndim <= 2 and b.ndim <= 2 or b.ndim == 1:
            return (_matmul_a if which == "a" else _matmul_b)(g, out, a, b)
        A, B = _dot_as_matmul(a, b)
        G = reshape(g, (A.shape[0], B.shape[1]))
        if which == "a":
            return reshape(matmul(G, _mT(B)), a.shape)
        gbt = reshape(matmul(_mT(A), G), (b.shape[-2],) + b.shape[:-2] + (b.shape[-1],))
        return transpose(gbt, tuple(range(1, b.ndim - 1)) + (0, b.ndim - 1))
    return rule


defvjp("matmul", a=_matmul_a, b=_matmul_b)
defvjp("dot", a=_dot("a"), b=_dot("b"))


# ---- neural-network ops ----------------------------------------------------------------------

def _layer_norm_parts(g, x, eps):
    work = "f32" if x.dtype.name == "f16" else x.dtype
    xw, gw = x.astype(work), g.astype(work)
    mu = _mean(xw, -1, True)
    xc = xw - mu
    rstd = rsqrt(_mean(xc * xc, -1, True) + float(eps))
    return gw, xc * rstd, rstd


def _layer_norm_x(g, out, x, gamma, beta, eps=1e-5):
    gw, xhat, rstd = _layer_norm_parts(g, x, eps)
    gy = gw * (gamma if is_py_scalar(gamma) else to_tensor(gamma).astype(gw.dtype))
    gx = rstd * (gy - _mean(gy, -1, True) - xhat * _mean(gy * xhat, -1, True))
    return _unbroadcast(gx, x.shape)


def _layer_norm_gamma(g, out, x, gamma, beta, eps=1e-5):
    gw, xhat, _ = _layer_norm_parts(g, x, eps)
    return _unbroadcast(gw * xhat, gamma.shape)


def _conv_x(g, out, x, w, stride=1, padding="VALID", dilation=1, groups=1):
    return conv2d_input_grad(g, w, x.shape, stride, padding, dilation, groups)


def _conv_w(g, out, x, w, stride=1, padding="VALID", dilation=1, groups=1):
    return conv2d_filter_grad(x, g, w.shape, stride, padding, dilation, groups)


defvjp("softmax", x=lambda g, out, x, axis=-1: out * (g - _sum(g * out, axis=axis, keepdims=True)))
defvjp("log_softmax", x=lambda g, out, x, axis=-1: g - exp(out) * _sum(g, axis=axis, keepdims=True))
defvjp("layer_norm", x=_layer_norm_x, gamma=_layer_norm_gamma,
       beta=lambda g, out, x, gamma, beta, eps=1e-5: _unbroadcast(g, beta.shape))
defvjp("conv2d", x=_conv_x, w=_conv_w)
defvjp("conv2d_input_grad",
       g=lambda c, out, g, w, x_shape, stride=1, padding="VALID", dilation=1, groups=1:
       conv2d(c, w, stride, padding, dilation, groups),
       w=lambda c, out, g, w, x_shape, stride=1, padding="VALID", dilation=1, groups=1:
       conv2d_filter_grad(c, g, w.shape, stride, padding, dilation, groups))
defvjp("conv2d_filter_grad",
       x=lambda c, out, x, g, w_shape, stride=1, padding="VALID", dilation=1, groups=1:
       conv2d_input_grad(g, c, x.shape, stride, padding, dilation, groups),
       g=lambda c, out, x, g, w_shape, stride=1, padding="VALID", dilation=1, groups=1:
       conv2d(x, c, stride, padding, dilation, groups))
defvjp("max_pool2d", x=lambda g, out, x, size, stride=None, padding="VALID":
       max_pool2d_grad(x, g, size, stride, padding))
defvjp("max_pool2d_grad", x=_none, g=lambda c, out, x, g, size, stride=None, padding="VALID":
       max_pool2d_select(x, c, size, stride, padding))
defvjp("max_pool2d_select", x=_none, c=lambda g, out, x, c, size, stride=None, padding="VALID":
       max_pool2d_grad(x, g, size, stride, padding))
defvjp("avg_pool2d", x=lambda g, out, x, size, stride=None, padding="VALID":
       avg_pool2d_grad(g, x.shape, size, stride, padding))
defvjp("avg_pool2d_grad", g=lambda c, out, g, x_shape, size, stride=None, padding="VALID":
       avg_pool2d(c, size, stride, padding))
