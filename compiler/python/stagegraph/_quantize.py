"""Quantized and half-precision weights in eager mode (SPEC §13): the values
sg.weight(name, quantize=...) computes with, the very values graph-compile stores
(kernels/quant/weight_format.cc): same layout, same f32 rounding at every step.

    int8  symmetric, a scale max|w|/127 (f32) per index of the last axis
    int4  symmetric, a scale max|w|/7 rounded to f16 per block along the axis before
          the last (axis 0 at rank 1), of the largest size <= 32 dividing it
    bf16  round to nearest even;  f16  IEEE half, round to nearest even

A dense layer x @ W with W int8 or int4 (sg.weight(name, quantize=...) as the right
operand of matmul, [K, N]) computes as the runtime does (kernels/quant/dynamic_gemm.h,
SPEC §13): each row of x quantized to int8 with a scale of its own, integer dot
products, the scales applied at the end (int8) or per K block (int4). Rows with a
non-finite value use the dequantized weights in f32. conv2d with an int8 filter
(HWIO, read as [KH*KW*Cin, Cout]) quantizes each image of its input once and
multiplies the patches of those integers the same way (_nn._dynamic_conv2d).
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
    return quantized(w, storage)[0]


def quantized(w, storage):
    """(dequantized values, integers, scales): the integers and scales are None for
    bf16 and f16; for int8 the scales are [1, N] (rank 2), for int4 [K/B, 1, N]
    against integers [K/B, B, N] (the blocks along K)."""
    if storage not in STORAGES:
        raise ValueError(f"quantize={storage!r}: use one of {', '.join(STORAGES)}")
    w = np.ascontiguousarray(w, np.float32)
    if not np.all(np.isfinite(w)):
        raise ValueError("a weight with non-finite values cannot be quantized")
    if storage == "f16":
        return w.astype(np.float16).astype(np.float32), None, None
    if storage == "bf16":
        return _bf16_round(w), None, None
    if w.ndim == 0 or w.size == 0:
        return w.copy(), None, None
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
    return (q * scale).astype(np.float32).reshape(w.shape), q, scale


def quantize_rows(x):
    """Each row of x [M, K] (f32) as int8: (q int64 [M, K], scale f32 [M], finite [M])."""
    with np.errstate(all="ignore"):
        absx = np.abs(x)
        finite = np.all(np.isfinite(x), axis=1)
        amax = np.where(finite, np.max(absx, axis=1, initial=np.float32(0)), np.float32(1)).astype(np.float32)
        inv = (np.float32(127.0) / amax).astype(np.float32)
        finite &= (amax == 0) | np.isfinite(inv)
        zero = amax == 0
        inv = np.where(zero, np.float32(0), inv).astype(np.float32)
        scale = np.where(zero, np.float32(0), (amax / np.float32(127.0)).astype(np.float32)).astype(np.float32)
        prod = (x * inv[:, None]).astype(np.float32)
        q = np.clip(np.rint(np.where(finite[:, None], prod, 0)), -127, 127).astype(np.int64)
    return q, scale, finite


def dynamic_matmul(x, storage, wq, scale, wide):
    """x [..., K] (f32) @ a [K, N] int8 or int4 weight quantized as `quantized` gave
    it (wq, scale; `wide` its dequantized values): SPEC §13's dynamic quantization."""
    k, n = wide.shape
    rows = np.ascontiguousarray(x, np.float32).reshape(-1, k)
    q, sa, finite = quantize_rows(rows)
    out = quantized_product(q, sa, storage, wq, scale)
    if not np.all(finite):
        with np.errstate(all="ignore"):
            f32 = (rows[~finite].astype(np.float64) @ wide.astype(np.float64)).astype(np.float32)
        out[~finite] = f32
    return out.reshape(tuple(x.shape[:-1]) + (n,))


def quantized_product(q, sa, storage, wq, scale):
    """Rows of integers q [M, K] with scales sa [M] times a [K, N] int8 or int4 weight
    (wq, scale as `quantized` gave them): the kernels' arithmetic (SPEC §13)."""
    n = wq.shape[-1]
    if storage == "int8":
        isum = q @ wq.astype(np.int64)
        out = ((isum.astype(np.float32) * sa[:, None]).astype(np.float32) * scale.reshape(1, n)).astype(np.float32)
    else:
        blocks, block = wq.shape[0], wq.shape[1]
        acc = np.zeros((q.shape[0], n), np.float32)
        qb = q.reshape(q.shape[0], blocks, block)
        for b in range(blocks):
            isum = qb[:, b, :] @ wq[b].astype(np.int64)
            # fma(f32(isum), s, acc), rounded once (float64 holds the product exactly)
            acc = (isum.astype(np.float32).astype(np.float64) * scale[b].astype(np.float64) +
                   acc.astype(np.float64)).astype(np.float32)
        out = (acc * sa[:, None]).astype(np.float32)
    return out
