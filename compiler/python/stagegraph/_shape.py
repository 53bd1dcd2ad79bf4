"""Shape ops of SPEC §7: they move elements without changing them (dtypes kept)."""

import operator

import numpy as np

from . import _dtypes as dt
from ._registry import register
from ._tape import differentiable
from ._tensor import Tensor, coerce, to_tensor


def _shape_arg(shape, op):
    """A shape given as an int or a sequence of ints (0-d int tensors included)."""
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(d) for d in shape)
    if isinstance(shape, Tensor) and shape.ndim == 1 and shape.dtype.name in ("i32", "i64"):
        # A shape read from a vector's values (its length is the rank).
        return tuple(int(d) for d in shape._a)
    try:
        return (operator.index(shape),)
    except TypeError:
        raise TypeError(f"{op}: a shape must be an int or a tuple of ints, not {type(shape).__name__}") from None


def _tensors(xs, op):
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)):
        raise TypeError(f"{op}: expects a list or tuple of tensors")
    if len(xs) == 0:
        raise ValueError(f"{op}: needs at least one tensor")
    return xs


@differentiable("reshape")
def reshape(x, shape):
    t = to_tensor(x, what="reshape")
    shape = _shape_arg(shape, "reshape")
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError("reshape: only one -1 is allowed")
    try:
        return Tensor(np.reshape(t._a, shape))
    except ValueError:
        raise ValueError(f"reshape: cannot reshape {dt.describe(t.dtype, t.shape)} to {list(shape)}") from None


@differentiable("transpose")
def transpose(x, axes=None):
    t = to_tensor(x, what="transpose")
    return Tensor(np.transpose(t._a, None if axes is None else _shape_arg(axes, "transpose")))


@differentiable("expand_dims")
def expand_dims(x, axis):
    t = to_tensor(x, what="expand_dims")
    axis = axis if not isinstance(axis, (tuple, list)) else tuple(axis)
    return Tensor(np.expand_dims(t._a, axis))


@differentiable("squeeze")
def squeeze(x, axis=None):
    t = to_tensor(x, what="squeeze")
    if axis is not None:
        axes = _shape_arg(axis, "squeeze")
        for a in axes:
            if not -t.ndim <= a < t.ndim or t.shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} of shape {list(t.shape)} is not of size 1")
        axis = axes
    return Tensor(np.squeeze(t._a, axis))


@differentiable("concatenate", lists=("xs",))
def concatenate(xs, axis=0):
    xs = _tensors(xs, "concatenate")
    # Lists of Python numbers beside tensors take their dtype, as a number does (SPEC §3).
    like = next((v for v in xs if isinstance(v, Tensor)), None)
    ts = [to_tensor(v, like=like if isinstance(v, (list, tuple)) else None, what="concatenate") for v in xs]
    for u in ts[1:]:
        if u.dtype is not ts[0].dtype:
            raise TypeError(f"concatenate: tensors of different dtypes {ts[0].dtype.name} and "
                            f"{u.dtype.name}; cast with astype")
    if axis is None:  # NumPy: the flattened tensors, joined
        return Tensor(np.concatenate([u._a.reshape(-1) for u in ts]))
    return Tensor(np.concatenate([u._a for u in ts], axis=operator.index(axis)))


@differentiable("stack", lists=("xs",))
def stack(xs, axis=0):
    if isinstance(xs, list) and not xs:
        # A list a loop left empty: the empty stack. Eager mode has no item to take
        # the type from, so it is f32[0]; a graph knows the items' type, [0, item dims].
        return Tensor(np.zeros((0,), np.float32))
    arrays, _ = coerce("stack", *_tensors(xs, "stack"))
    return Tensor(np.stack(arrays, axis=operator.index(axis)))


@differentiable("split")
def split(x, indices_or_sections, axis=0):
    t = to_tensor(x, what="split")
    if isinstance(indices_or_sections, (list, tuple)):
        spec = [operator.index(i) for i in indices_or_sections]
    else:
        spec = operator.index(indices_or_sections)
        n = t.shape[axis]
        if spec <= 0 or n % spec:
            raise ValueError(f"split: {n} elements along axis {axis} do not split into {spec} equal parts")
    return [Tensor(p) for p in np.split(t._a, spec, axis=operator.index(axis))]


@differentiable("broadcast_to")
def broadcast_to(x, shape):
    t = to_tensor(x, what="broadcast_to")
    shape = _shape_arg(shape, "broadcast_to")
    try:
        return Tensor(np.broadcast_to(t._a, shape))
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast {dt.describe(t.dtype, t.shape)} to {list(shape)}") from None


@differentiable("tile")
def tile(x, reps):
    t = to_tensor(x, what="tile")
    return Tensor(np.tile(t._a, _shape_arg(reps, "tile")))


@differentiable("pad")
def pad(x, pad_width, constant_values=None):
    """Constant padding; pad_width as NumPy takes it ((before, after) per dim, or one pair).
    Without constant_values the fill is the dtype's zero (False for bool), as in NumPy."""
    t = to_tensor(x, what="pad")
    if constant_values is None:
        constant_values = False if t.dtype is dt.bool_ else 0
    (_, value), d = coerce("pad", t, constant_values)
    if d is not t.dtype:
        raise TypeError(f"pad: a {d.name} padding value for a {t.dtype.name} tensor; "
                        "cast with astype")
    widths = np.asarray(pad_width, dtype=np.int64)
    if np.any(widths < 0):
        raise ValueError("pad: widths must be >= 0")
    return Tensor(np.pad(t._a, widths, mode="constant", constant_values=value))


# The ops Tensor's methods and operators call (_registry.py).
register(reshape=reshape, transpose=transpose, squeeze=squeeze, stack=stack)
