"""Eager mode on the runtime's kernels (SPEC §1, §14): the one place where an op
chooses between the runtime and NumPy.

Where the extension (stagegraph._runtime) is installed, an op that has a kernel
runs as a one-node program (``_runtime.op_graph``: the op, its attributes and its
operands' dtypes and shapes) on a Session kept for that signature, so eager mode
and a compiled ``-O0`` graph compute every op with the same code and agree bit for
bit. ``STAGEGRAPH_EAGER=numpy`` (or no extension) keeps NumPy for every op: the
independent reference the tests compare graphs against.

The op modules call ``run(op, arrays, attrs)`` after their own argument checks
(dtype rules, errors that name the op) and with the operands the compiler would
give the node: ``None`` back means NumPy computes the op (NumPy mode, or an
operand the kernel does not take, whose NumPy path then raises or computes).

Ops that stay on NumPy in both modes: shape ops, indexing and creation (they move
or fill values, and NumPy moves them the same way), sort, argsort, topk, take,
concatenate, stack, tile, pad, conv2d, pools, one_hot, logsumexp (a composite
here, which the compiler stages as several nodes), bitwise ``& | ^``, the random
module (its transforms are specified f32 arithmetic, done in the same order as
the runtime's random kernel), and control flow, which eager mode runs in Python.
"""

import os
import threading

import numpy as np

_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.int32): "i32",
          np.dtype(np.int64): "i64", np.dtype(np.bool_): "bool"}
# The runtime's DType values (core/include/stagegraph/dtype.h), for cast's attribute.
DTYPE_VALUES = {"f32": 0, "f16": 1, "i32": 2, "i64": 3, "bool": 4}


def _runtime_module():
    mode = os.environ.get("STAGEGRAPH_EAGER", "").strip().lower()
    if mode not in ("", "kernels", "numpy"):
        raise ImportError(f"STAGEGRAPH_EAGER={mode!r}: use 'numpy' or 'kernels'")
    if mode == "numpy":
        return None
    try:
        from . import _runtime
    except ImportError:
        if mode == "kernels":
            raise ImportError("STAGEGRAPH_EAGER=kernels needs the extension (pip install .)") from None
        return None
    return _runtime


_runtime = _runtime_module()
# A Session serves one thread at a time (SPEC §14), so each thread keeps its own.
_local = threading.local()


def backend():
    """'kernels' where eager ops run on the runtime's kernels, else 'numpy'."""
    return "numpy" if _runtime is None else "kernels"


def _entry(op, arrays, attrs):
    names = []
    for a in arrays:
        name = _NAMES.get(a.dtype)
        if name is None:
            return None
        names.append((name, a.shape))
    try:
        data = _runtime.op_graph(op, names, dict(attrs))
    except (ValueError, TypeError):
        return None  # operands the op does not take: NumPy's path says why
    return _runtime.load_bytes(data).session().op


def run(op, arrays, attrs=()):
    """`op` on the runtime's kernels: its result array (a tuple for several), or None
    where NumPy computes it. `arrays` are NumPy arrays; `attrs` a tuple of (name,
    value) pairs with tuples for lists, the node's attributes."""
    if _runtime is None:
        return None
    try:
        calls = _local.calls
    except AttributeError:
        calls = _local.calls = {}
    key = (op, attrs, *[(a.dtype, a.shape) for a in arrays])
    call = calls.get(key, False)
    if call is False:
        call = calls[key] = _entry(op, arrays, attrs)
    if call is None:
        return None
    out = call(*[a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays])
    return tuple(out.values()) if isinstance(out, dict) else out


def cache_size():
    """Sessions this thread holds, one per op signature met so far."""
    return len(getattr(_local, "calls", {}))
