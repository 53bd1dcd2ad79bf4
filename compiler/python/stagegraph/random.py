"""sg.random: counter-based random numbers with explicit keys (SPEC §3), eager mode.

    key = sg.random.key(0)
    k1, k2 = sg.random.split(key)
    x = sg.random.normal(k1, (3, 4))

A key is an i64[2] tensor holding two 32-bit words. Every draw is Threefry-2x32 (20
rounds, Random123's and JAX's) of the key and the element's index, turned into
floats by a fixed sequence of float32 operations. The compiled graph's `random` op
(kernels/reference/random.cc) does the same operations in the same order, so eager
mode and the runtime give the same bits. There is no global state: the same key
gives the same numbers; split a key to get new ones.
"""

import numpy as np

from . import _dtypes as dt
from ._shape import _shape_arg
from ._tensor import Tensor, to_tensor

__all__ = ["key", "split", "bits", "uniform", "normal", "categorical", "bernoulli", "threefry2x32"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_U32 = np.uint32
_F32 = np.float32


def _f(hex_text):
    return _F32(float.fromhex(hex_text))


# log_f32 (FreeBSD's logf in f32); erfinv_f32 (Giles' single-precision approximation).
_LN2_HI = _f("0x1.62e300p-1")
_LN2_LO = _f("0x1.2fefa2p-17")
_LG1 = _f("0xaaaaaa.0p-24")
_LG2 = _f("0xccce13.0p-25")
_LG3 = _f("0x91e9ee.0p-25")
_LG4 = _f("0xf89e26.0p-26")
_ERFINV_SMALL = [_F32(c) for c in (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)]
_ERFINV_LARGE = [_F32(c) for c in (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                                    0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)]
_NORMAL_LO = _f("-0x1.fffffep-1")  # nextafter(-1, 0)
_SQRT2 = _f("0x1.6a09e6p+0")
_TINY = _f("0x1p-126")  # the smallest normal float32


def _rotl(x, r):
    return (x << _U32(r)) | (x >> _U32(32 - r))


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32-20 of the counters (x0, x1) under the key (k0, k1), uint32."""
    k0 = np.asarray(k0, _U32).reshape(-1)
    k1 = np.asarray(k1, _U32).reshape(-1)
    x0 = np.array(x0, _U32).reshape(-1)
    x1 = np.array(x1, _U32).reshape(-1)
    ks = (k0, k1, k0 ^ k1 ^ _U32(0x1BD11BDA))
    with np.errstate(over="ignore"):
        x0 = x0 + ks[0]
        x1 = x1 + ks[1]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x0 = x0 + x1
                x1 = _rotl(x1, r)
                x1 = x1 ^ x0
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + _U32(i + 1)
    return x0, x1


def _key_words(key, what):
    t = to_tensor(key, what=what)
    if t.dtype != dt.i64 or t.shape != (2,):
        raise TypeError(f"{what}: the key must be an i64[2] tensor (sg.random.key), "
                        f"got {t.dtype.name}{list(t.shape)}")
    a = t._a.astype(np.int64)
    return _U32(int(a[0]) & 0xFFFFFFFF), _U32(int(a[1]) & 0xFFFFFFFF)


def _words(key, n, what):
    """The two words of elements 0..n-1 of a draw (the counter is the 64-bit index)."""
    k0, k1 = _key_words(key, what)
    idx = np.arange(n, dtype=np.uint64)
    return threefry2x32(k0, k1, (idx >> np.uint64(32)).astype(_U32), (idx & np.uint64(0xFFFFFFFF)).astype(_U32))


def _bits(key, shape, what):
    shape = _shape_arg(shape, what)
    w0, w1 = _words(key, int(np.prod(shape, dtype=np.int64)), what)
    return (w0 ^ w1), shape


def _uniform01(b):
    return ((b >> _U32(9)) | _U32(0x3F800000)).view(_F32) - _F32(1.0)


def _uniform_in(b, lo, hi):
    scale = np.array([hi], _F32) - np.array([lo], _F32)
    v = _uniform01(b) * scale + _F32(lo)
    return np.where(v > lo, v, _F32(lo)).astype(_F32)


def _log_f32(x):
    """Natural log of positive normal float32s, the operations of random.cc's log_f32."""
    ix = np.ascontiguousarray(x, _F32).view(_U32) + _U32(0x3F800000 - 0x3F3504F3)
    k = (ix >> _U32(23)).astype(np.int32) - np.int32(0x7F)
    ix = (ix & _U32(0x007FFFFF)) + _U32(0x3F3504F3)
    f = ix.view(_F32) - _F32(1.0)
    s = f / (_F32(2.0) + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * _LG4)
    t2 = z * (_LG1 + w * _LG3)
    r = t2 + t1
    hfsq = _F32(0.5) * f * f
    dk = k.astype(_F32)
    return s * (hfsq + r) + dk * _LN2_LO - hfsq + f + dk * _LN2_HI


def _erfinv_f32(x):
    w = -_log_f32((_F32(1.0) - x) * (_F32(1.0) + x))
    small = w < _F32(5.0)
    with np.errstate(invalid="ignore"):
        w = np.where(small, w - _F32(2.5), np.sqrt(w) - _F32(3.0)).astype(_F32)
    p = np.where(small, _ERFINV_SMALL[0], _ERFINV_LARGE[0]).astype(_F32)
    for cs, cl in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
        p = np.where(small, cs, cl).astype(_F32) + p * w
    return p * x


def _normal_from_bits(b):
    return _SQRT2 * _erfinv_f32(_uniform_in(b, _NORMAL_LO, _F32(1.0)))


def _gumbel_from_bits(b):
    return -_log_f32(-_log_f32(_uniform_in(b, _TINY, _F32(1.0))))


def _float_dtype(dtype, what):
    if dt.resolve(dtype) != dt.f32:
        raise TypeError(f"{what}: draws are f32, got dtype={dt.resolve(dtype).name}")


# ---- the library ----------------------------------------------------------------

def key(seed):
    """A key from an integer seed: [seed >> 32, seed & 0xffffffff] as an i64[2]."""
    if isinstance(seed, bool):
        raise TypeError("sg.random.key: the seed must be an integer, got bool")
    if isinstance(seed, int):
        if not -2**63 <= seed < 2**63:
            raise OverflowError(f"sg.random.key: the seed {seed} does not fit in an i64")
        s = np.int64(seed)
    else:
        t = to_tensor(seed, what="sg.random.key")
        if t.ndim != 0 or not t.dtype.is_int:
            raise TypeError(f"sg.random.key: the seed must be an integer scalar, got {t.dtype.name}{list(t.shape)}")
        s = np.int64(t._a)
    return Tensor(np.array([(int(s) >> 32) & 0xFFFFFFFF, int(s) & 0xFFFFFFFF], np.int64))


def split(key, n=2):
    """n new keys (an i64[n, 2]); n may be a shape, giving i64[*shape, 2]."""
    shape = _shape_arg(n, "sg.random.split")
    w0, w1 = _words(key, int(np.prod(shape, dtype=np.int64)), "sg.random.split")
    return Tensor(np.stack([w0.astype(np.int64), w1.astype(np.int64)], axis=-1).reshape(shape + (2,)))


def bits(key, shape=()):
    """Random 32-bit words, as i64 values in [0, 2**32)."""
    b, shape = _bits(key, shape, "sg.random.bits")
    return Tensor(b.astype(np.int64).reshape(shape))


def _affine(u, minval, maxval, what):
    if not isinstance(minval, Tensor) and not isinstance(maxval, Tensor) and minval == 0 and maxval == 1:
        return Tensor(u)
    lo = to_tensor(minval, what=what)
    hi = to_tensor(maxval, what=what)
    if lo.dtype != dt.f32 or hi.dtype != dt.f32:
        lo, hi = lo.astype(dt.f32), hi.astype(dt.f32)
    scale = hi._a - lo._a
    return Tensor(np.maximum(lo._a, u * scale + lo._a).astype(_F32))


def uniform(key, shape=(), dtype=dt.f32, minval=0.0, maxval=1.0):
    """f32 draws on [minval, maxval): max(minval, u * (maxval - minval) + minval), u on [0, 1)."""
    _float_dtype(dtype, "sg.random.uniform")
    b, shape = _bits(key, shape, "sg.random.uniform")
    return _affine(_uniform01(b).reshape(shape), minval, maxval, "sg.random.uniform")


def normal(key, shape=(), dtype=dt.f32):
    """Standard normal f32 draws: sqrt(2)·erfinv(u), u uniform on [nextafter(-1, 0), 1)."""
    _float_dtype(dtype, "sg.random.normal")
    b, shape = _bits(key, shape, "sg.random.normal")
    return Tensor(_normal_from_bits(b).reshape(shape))


def _gumbel(key, shape, what):
    b, shape = _bits(key, shape, what)
    return _gumbel_from_bits(b).reshape(shape)


def categorical(key, logits, axis=-1):
    """Indices (i64) drawn with probabilities softmax(logits) along `axis`:
    argmax(logits + gumbel(key, logits.shape), axis)."""
    t = to_tensor(logits, what="sg.random.categorical")
    if t.ndim == 0:
        raise ValueError("sg.random.categorical: logits must have at least one axis")
    if not -t.ndim <= axis < t.ndim:
        raise ValueError(f"sg.random.categorical: axis {axis} is out of bounds for a tensor of rank {t.ndim}")
    lg = t._a.astype(_F32)
    g = _gumbel(key, lg.shape, "sg.random.categorical")
    return Tensor(np.argmax(g + lg, axis=axis).astype(np.int64))


def bernoulli(key, p=0.5, shape=None):
    """bool draws, True with probability p: uniform(key, shape) < p (shape: p's by default)."""
    pt = to_tensor(p, what="sg.random.bernoulli").astype(dt.f32)
    shape = pt.shape if shape is None else _shape_arg(shape, "sg.random.bernoulli")
    u = uniform(key, shape)
    return Tensor(u._a < pt._a)
