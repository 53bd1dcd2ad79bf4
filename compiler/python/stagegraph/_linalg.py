"""matmul and dot (NumPy's semantics, §3's dtypes: both operands of one dtype)."""

import numpy as np

from . import _dtypes as dt
from . import _kernels
from ._registry import register
from ._tape import differentiable
from ._tensor import Tensor, is_py_scalar, to_tensor


def _operands(op, a, b):
    if is_py_scalar(a) or is_py_scalar(b):
        raise TypeError(f"{op}: operands must be tensors, not Python numbers")
    x, y = to_tensor(a, what=op), to_tensor(b, what=op)
    if x.dtype is not y.dtype:
        raise TypeError(f"{op}: operands have different dtypes {x.dtype.name} and {y.dtype.name}; "
                        "cast one with astype")
    if x.dtype is dt.bool_:
        raise TypeError(f"{op}: not defined for bool operands; cast with astype")
    return x, y


def _compute(fn, x, y):
    d = x.dtype
    # Float products accumulate in float64 and round once: an accurate reference
    # that does not depend on the BLAS NumPy was built with.
    work = np.float64 if d.is_float else d.np
    with np.errstate(all="ignore"):
        r = fn(x._a.astype(work, copy=False), y._a.astype(work, copy=False))
    return Tensor(np.asarray(r).astype(d.np, copy=False))


@differentiable("matmul")
def matmul(a, b):
    x, y = _operands("matmul", a, b)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("matmul: operands must have at least one dim, got 0-d")
    if x.shape[-1] != y.shape[-2 if y.ndim > 1 else 0]:
        raise ValueError(f"matmul: inner dims differ: {dt.describe(x.dtype, x.shape)} @ "
                         f"{dt.describe(y.dtype, y.shape)}")
    if y.ndim == 2 and x.dtype is dt.f32:
        from ._staging import quantized_weight
        qw = quantized_weight(b)
        if qw is not None:
            from ._quantize import dynamic_matmul
            return Tensor(dynamic_matmul(x._a, qw[0], qw[1], qw[2], y._a))
    r = _kernels.run("matmul", (x._a, y._a))
    if r is not None:
        return Tensor(r)
    return _compute(np.matmul, x, y)


@differentiable("dot")
def dot(a, b):
    x, y = _operands("dot", a, b)
    return _compute(np.dot, x, y)


# The ops Tensor's methods and operators call (_registry.py).
register(dot=dot, matmul=matmul)
