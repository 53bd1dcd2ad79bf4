"""Quantized and half-precision weights in eager mode (SPEC §13): the values
sg.weight(name, quantize=...) computes with, the very values graph-compile stores
(kernels/quant/weight_format.cc): same layout, same f32 rounding at every step.

    int8  symmetric, a scale max|w|/127 (f32) per index of the last axis
    int4  symmetric, a scale max|w|/7 rounded to f16 per block along the axis before
          the last (axis 0 at rank 1), of the largest size <= 32 dividing it
    bf16  round to nearest even;  f16  IEEE half, round to nearest even
"""

import numpy as np

STORAGES = ("int8", "int4", "bf16", "f16")
DEFAULT_INT4_BLOCK = 32


def _bf16_round(w):
    bits = np.ascontiguousarray(w, np.float32).view(np.uint32)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    kept = (bits | np.uint32(0x400000)) & np.uint32(0xFFFF0000)
    return np.where(nan, kept, rounded).astype(np.uint32).view(np.float32)


def _int4_block(length, block=DEFAULT_INT4_BLOCK):
    b = max(1, min(block, length))
    while length > 0 and length % b != 0:
        b -= 1
    return b


def dequantized(w, storage):
    """The f32 values of `w` (f32) after storing it as `storage` and widening it back."""
    if storage not in STORAGES:
        raise ValueError(f"quantize={storage!r}: use one of {', '.join(STORAGES)}")
    w = np.ascontiguousarray(w, np.float32)
    if not np.all(np.isfinite(w)):
        raise ValueError("a weight with non-finite values cannot be quantized")
    if storage == "f16":
        return w.astype(np.float16).astype(np.float32)
    if storage == "bf16":
        return _bf16_round(w)
    if w.ndim == 0 or w.size == 0:
        return w.copy()
    if storage == "int8":
        amax = np.max(np.abs(w), axis=tuple(range(w.ndim - 1)), keepdims=True)
        scale = (amax / np.float32(127.0)).astype(np.float32)
        lo, hi = -127.0, 127.0
        groups = w
    else:
        axis = max(w.ndim - 2, 0)
        block = _int4_block(w.shape[axis])
        shape = w.shape[:axis] + (w.shape[axis] // block, block) + w.shape[axis + 1:]
        groups = w.reshape(shape)
        amax = np.max(np.abs(groups), axis=axis + 1, keepdims=True)
        scale = (amax / np.float32(7.0)).astype(np.float32).astype(np.float16).astype(np.float32)
        lo, hi = -8.0, 7.0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(scale == 0, np.float32(0), np.clip(np.rint(groups / scale), lo, hi)).astype(np.float32)
    return (q * scale).astype(np.float32).reshape(w.shape)
