"""stagegraph.nn: losses (SPEC §11) and the neural-network ops of SPEC §7 under one name.

    from stagegraph import nn

    loss = nn.cross_entropy(logits, labels)      # or sg.nn.cross_entropy

Every loss is the mean over all its elements (for cross_entropy: over the batch), in
the logits' (predictions') dtype, and stays finite with finite gradients for logits
of any size (±1000 included): the forms with exp are computed with the max taken
out. A target broadcasts to the prediction's shape, never the other way round: a
[N] target beside [N, 1] predictions (a [N, N] loss) is a ValueError.
"""

import numpy as np

from ._autodiff import _unbroadcast
from ._elementwise import abs, gelu, relu, sigmoid, square  # noqa: A004 - the op library's names
from ._creation import one_hot
from ._indexing import gather_along
from ._nn import avg_pool2d, conv2d, layer_norm, log_softmax, max_pool2d, softmax
from ._reduction import logsumexp, mean, sum  # noqa: A004
from ._shape import reshape
from ._tape import defvjp, differentiable
from ._tensor import Tensor, to_tensor

__all__ = ["cross_entropy", "binary_cross_entropy_with_logits", "mse", "l1",
           "softmax", "log_softmax", "logsumexp", "relu", "gelu", "sigmoid", "one_hot", "layer_norm",
           "conv2d", "max_pool2d", "avg_pool2d"]


def _float_prediction(x, op, name):
    t = to_tensor(x, what=op)
    if not t.dtype.is_float:
        raise TypeError(f"{op}: {name} must be f32 or f16, not {t.dtype.name}; cast with astype")
    return t


def _target(target, pred, op):
    """The target, of the prediction's dtype, checked to broadcast to its shape."""
    t = to_tensor(target, like=pred, what=op)
    if t.dtype is not pred.dtype:
        raise TypeError(f"{op}: the target is {t.dtype.name} but the prediction is {pred.dtype.name}; "
                        "cast with astype")
    try:
        shape = np.broadcast_shapes(t.shape, pred.shape)
    except ValueError:
        shape = None
    if shape != pred.shape:
        raise ValueError(f"{op}: a target of shape {list(t.shape)} does not match predictions of shape "
                         f"{list(pred.shape)}")
    return t


def cross_entropy(logits, labels):
    """The mean over the batch of -log_softmax(logits)[i, labels[i]]: logits [..., C],
    integer labels [...] in [0, C). Float labels of the logits' shape are
    probabilities (soft labels): the mean of -sum_c labels * log_softmax(logits)."""
    x = _float_prediction(logits, "cross_entropy", "logits")
    if x.ndim == 0:
        raise ValueError("cross_entropy: logits need a class axis, got a scalar")
    lsm = log_softmax(x, axis=-1)
    y = to_tensor(labels, what="cross_entropy")
    if y.dtype.is_float:
        y = _target(y, x, "cross_entropy")
        return -mean(sum(y * lsm, axis=-1))
    if not y.dtype.is_int:
        raise TypeError(f"cross_entropy: labels must be integer class indices or float probabilities, "
                        f"not {y.dtype.name}")
    if y.shape != x.shape[:-1]:
        raise ValueError(f"cross_entropy: labels of shape {list(y.shape)} for logits of shape "
                         f"{list(x.shape)} (expected {list(x.shape[:-1])})")
    n = x.shape[-1]
    bad = (y._a < 0) | (y._a >= n)
    if np.any(bad):
        raise IndexError(f"cross_entropy: label {int(y._a[bad].flat[0])} is out of range for {n} classes")
    picked = gather_along(lsm, reshape(y, y.shape + (1,)), x.ndim - 1)
    return -mean(picked)


@differentiable("bce_with_logits")
def _bce_terms(x, t):
    """max(x, 0) - x*t + log(1 + exp(-|x|)) elementwise (f32 in f64, f16 in f32)."""
    a = x._a.astype(np.float64 if x._a.dtype == np.float32 else np.float32)
    b = t._a.astype(a.dtype)
    with np.errstate(all="ignore"):
        r = np.maximum(a, 0) - a * b + np.log1p(np.exp(-np.abs(a)))
    return Tensor(r.astype(x._a.dtype))


defvjp("bce_with_logits",
       x=lambda g, out, x, t: g * (sigmoid(x) - t),
       t=lambda g, out, x, t: _unbroadcast(-g * x, t.shape))


def binary_cross_entropy_with_logits(logits, targets):
    """The mean of max(x, 0) - x*t + log(1 + exp(-|x|)) for logits x and targets t in
    [0, 1]: the binary cross-entropy of sigmoid(x), without computing it."""
    x = _float_prediction(logits, "binary_cross_entropy_with_logits", "logits")
    t = _target(targets, x, "binary_cross_entropy_with_logits")
    return mean(_bce_terms(x, t))


def mse(pred, target):
    """The mean of (pred - target)²."""
    p = _float_prediction(pred, "mse", "pred")
    return mean(square(p - _target(target, p, "mse")))


def l1(pred, target):
    """The mean of |pred - target|."""
    p = _float_prediction(pred, "l1", "pred")
    return mean(abs(p - _target(target, p, "l1")))
