"""Entry points and staging helpers in eager mode: @sg.function, sg.range,
sg.relax, sg.weight, sg.load_weights.

An @sg.function called from plain Python (NumPy in, NumPy out) checks its inputs
against the annotations the way graph-run does (dtype never converted, symbolic
dims consistent), runs the body on Tensors, and returns plain NumPy. Called from
inside another staged function it is an ordinary Python call.
"""

import builtins
import contextlib
import functools
import inspect
import json
import operator
import os
import threading

import numpy as np

from . import _dtypes as dt
from ._tensor import Tensor, from_numpy, scalar_dtype, scalar_to_array
from ._tree import tree_map

# How many staged bodies this thread is inside; an entry called at depth 0 is the
# NumPy boundary.
_calls = threading.local()


def _depth():
    return getattr(_calls, "depth", 0)


@contextlib.contextmanager
def inside_body():
    """Runs a block as if inside a staged body: an @sg.function called in it is a plain
    Python call on Tensors (sg.grad runs the function it differentiates this way)."""
    _calls.depth = _depth() + 1
    try:
        yield
    finally:
        _calls.depth -= 1


class Function:
    """What @sg.function returns: callable like the function, marked as an entry."""

    __sg_entry__ = True

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.signature = inspect.signature(fn)

    def annotations(self):
        try:
            return inspect.get_annotations(self.fn, eval_str=True)
        except Exception:  # noqa: BLE001 - unevaluable string annotations: treat as absent
            return dict(getattr(self.fn, "__annotations__", {}))

    def __call__(self, *args, **kwargs):
        if _depth() > 0:
            # Inside a body (or a function sg.grad runs): NumPy arrays become Tensors,
            # as the entry's own inputs would.
            def tensor(v):
                return from_numpy(v, "an argument") if isinstance(v, (np.ndarray, np.generic)) else v
            return self.fn(*[tensor(a) for a in args], **{k: tensor(v) for k, v in kwargs.items()})
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        annotations = self.annotations()
        dims = {}
        for name, value in bound.arguments.items():
            bound.arguments[name] = _input(name, value, annotations.get(name), dims)
        from . import _variables
        _calls.depth = 1
        _variables.begin()
        ok = False
        try:
            result = self.fn(*bound.args, **bound.kwargs)
            out = _output(result, self.__name__)
            ok = True
        finally:
            _calls.depth = 0
            _variables.commit(ok)
        return out

    def __repr__(self):
        return f"<sg.function {self.__name__}>"


def function(fn):
    """Marks an entry point (SPEC §2)."""
    if not callable(fn):
        raise TypeError("sg.function decorates a function")
    return Function(fn)


def _input(name, value, annotation, dims):
    if isinstance(value, Tensor):
        value = value.numpy()
    spec = annotation if isinstance(annotation, (dt.DType, dt.TensorType)) else None
    if spec is None:
        if isinstance(value, (np.ndarray, np.generic)):
            return from_numpy(value, f"input '{name}'")
        return value
    want = dt.describe(spec.dtype, spec.dims)
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        if a.dtype != spec.dtype.np:
            raise TypeError(f"input '{name}': expected {want}, got a {a.dtype} array "
                            "(inputs are never converted; use astype)")
    else:
        a = np.asarray(value, dtype=spec.dtype.np)
    if a.ndim != len(spec.dims):
        raise ValueError(f"input '{name}': expected {want}, got shape {list(a.shape)}")
    for d, n in zip(spec.dims, a.shape):
        if isinstance(d, int) and d != n:
            raise ValueError(f"input '{name}': expected {want}, got shape {list(a.shape)}")
        if isinstance(d, str):
            seen = dims.setdefault(d, (n, name))
            if seen[0] != n:
                raise ValueError(f"input '{name}': dim {d} is {n} here but {seen[0]} in input '{seen[1]}'")
    return Tensor(a)


def _output(value, fn_name):
    """The result as plain NumPy: tensors, numbers and arrays become arrays, in the same
    structure (tuples, named tuples, lists, dicts, dataclasses, the program's objects:
    a gradient as sg.grad gives it). None and strings inside a structure stay as they
    are."""
    def check_keys(container, _path):
        if isinstance(container, dict):
            for k in container:
                if not isinstance(k, str):
                    raise TypeError(f"{fn_name}: result dict keys must be strings, not {k!r}")

    return tree_map(lambda v, path: _output_leaf(v, path, fn_name), value, visit=check_keys)


def _output_leaf(value, path, fn_name):
    if isinstance(value, Tensor):
        return np.array(value._a)
    if isinstance(value, (builtins.bool, int, float)) and not isinstance(value, np.generic):
        return scalar_to_array(value, scalar_dtype(value))
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(from_numpy(value)._a)
    if path and (value is None or isinstance(value, str)):
        return value  # static parts of a structure (a gradient keeps its argument's)
    where = f" (at {path})" if path else ""
    raise TypeError(f"{fn_name}: an entry point returns tensors, alone or in tuples, lists, dicts, "
                    f"named tuples, dataclasses or objects, not {type(value).__name__}{where}")


def range(*args):  # noqa: A001 - sg.range mirrors the builtin
    """Like range(), but the counter is an i64 scalar tensor, as in the graph (a
    staged While loop always)."""
    bounds = [operator.index(a) for a in args]
    for i in builtins.range(*bounds):
        yield Tensor(np.array(i, dtype=np.int64))


def relax(x, name, axis):
    """Declares dim `axis` of a loop's initial value symbolic; eager mode keeps x."""
    if not isinstance(name, str) or not name:
        raise TypeError("relax: the dim name must be a non-empty string")
    ndim = x.ndim if isinstance(x, Tensor) else np.ndim(x)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"relax: axis {axis} is out of range for rank {ndim}")
    return x


# ---- weights ------------------------------------------------------------------------------

_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "I64": "<i8", "BOOL": "|b1"}


def write_safetensors(path, tensors):
    """Writes {name: array} (F32, F16, I32, I64, BOOL) as a safetensors file, the
    format read_safetensors and graph-compile --weights read."""
    kinds = {np.dtype(v).name: k for k, v in _SAFETENSORS_DTYPES.items()}
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        kind = kinds.get(a.dtype.name)
        if kind is None:
            raise ValueError(f"tensor '{name}': dtype {a.dtype} has no safetensors kind here "
                             "(expected float32, float16, int32, int64 or bool)")
        data = a.astype(_SAFETENSORS_DTYPES[kind]).tobytes()
        header[name] = {"dtype": kind, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def read_safetensors(path):
    """{name: numpy array} of a safetensors file (F32, F16, I32, I64, BOOL)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than 8 bytes)")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise ValueError(f"{path}: not a safetensors file (header of {n} bytes announced)")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise ValueError(f"{path}: the safetensors header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the safetensors header is not a JSON object")
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        kind = info.get("dtype")
        if kind not in _SAFETENSORS_DTYPES:
            raise ValueError(f"{path}: tensor '{name}': unsupported dtype {kind!r} "
                             "(expected F32, F16, I32, I64 or BOOL)")
        shape = tuple(info.get("shape", ()))
        begin, end = info.get("data_offsets", (0, -1))
        np_dtype = np.dtype(_SAFETENSORS_DTYPES[kind])
        count = int(np.prod(shape, dtype=np.int64))
        if not 0 <= begin <= end <= len(data) - base or end - begin != count * np_dtype.itemsize:
            raise ValueError(f"{path}: tensor '{name}': data offsets {[begin, end]} do not hold "
                             f"{kind}{list(shape)}")
        a = np.frombuffer(data, np_dtype, count, base + begin).reshape(shape).copy()
        out[name] = a.astype(np.bool_) if kind == "BOOL" else a
    return out


class _WeightStore:
    def __init__(self):
        self.path = None
        self.tensors = {}


_weights = _WeightStore()


def load_weights(path):
    """Makes the tensors of a safetensors file available to sg.weight(name)."""
    _weights.tensors = read_safetensors(path)
    _weights.path = path
    return dict(_weights.tensors)


class _QuantizedWeight(Tensor):
    """An int8 or int4 weight from sg.weight(quantize=): its dequantized values, and
    the integers and scales matmul uses when it is the right operand, and conv2d
    when it is an int8 filter (SPEC §13).
    Every other op sees the dequantized values (and returns a plain Tensor)."""
    __slots__ = ("_quant",)

    def __init__(self, array, quant):
        super().__init__(array)
        self._quant = quant


def quantized_weight(t):
    """(storage, integers, scales) when `t` is an int8 or int4 weight, else None."""
    return t._quant if isinstance(t, _QuantizedWeight) else None


def weight(name, quantize=None):
    """The tensor `name` of the weights file (sg.load_weights or STAGEGRAPH_WEIGHTS).
    With quantize='int8'|'int4'|'bf16'|'f16': its values stored that way and widened
    back to f32, as the compiled graph computes with them (SPEC §13)."""
    if _weights.path is None:
        path = os.environ.get("STAGEGRAPH_WEIGHTS")
        if not path:
            raise RuntimeError(f"sg.weight({name!r}): no weights loaded; call sg.load_weights(path) "
                               "or set STAGEGRAPH_WEIGHTS")
        load_weights(path)
    if name not in _weights.tensors:
        known = ", ".join(sorted(_weights.tensors)) or "none"
        raise KeyError(f"sg.weight({name!r}): no such tensor in {_weights.path} (it has: {known})")
    if quantize is not None:
        from ._quantize import quantized, STORAGES
        values = _weights.tensors[name]
        if values.dtype != np.float32:
            raise TypeError(f"sg.weight({name!r}, quantize=...) needs an f32 weight, not {values.dtype}")
        if quantize not in STORAGES:
            raise ValueError(f"quantize={quantize!r}: use one of {', '.join(STORAGES)}")
        wide, q, scale = quantized(values, quantize)
        if quantize in ("int8", "int4") and wide.ndim in (2, 4) and q is not None:
            # matmul with it as the right operand, and conv2d with an int8 one as the
            # filter, quantize their activations (SPEC §13)
            return _QuantizedWeight(wide, (quantize, q, scale))
        return Tensor(wide)
    return Tensor(_weights.tensors[name])
