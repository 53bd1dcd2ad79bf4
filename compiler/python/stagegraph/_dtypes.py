"""Stagegraph dtypes (SPEC §2-§3) and the annotations built from them.

``sg.f32`` is a dtype; ``sg.f32["N", 784]`` is a tensor type with a symbolic dim N.
Both have ``.dtype`` and ``.dims`` so an annotation can be read the same way
whether it names dims or not (plain ``sg.f32`` is a scalar).
"""

import numpy as np


class DType:
    """One of the five element types. ``name`` is 'f32', ..., ``np`` the NumPy dtype."""

    __slots__ = ("name", "np")

    def __init__(self, name, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)

    @property
    def dtype(self):
        return self

    @property
    def dims(self):
        return ()

    @property
    def is_float(self):
        return self.np.kind == "f"

    @property
    def is_int(self):
        return self.np.kind == "i"

    @property
    def is_bool(self):
        return self.np.kind == "b"

    def __getitem__(self, dims):
        if not isinstance(dims, tuple):
            dims = (dims,)
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, (int, str)):
                raise TypeError(f"a dim of {self!r}[...] must be an int or a name, not {d!r}")
            if isinstance(d, int) and d < 0:
                raise ValueError(f"a dim of {self!r}[...] must be >= 0, not {d}")
        return TensorType(self, dims)

    def __repr__(self):
        return f"sg.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


class TensorType:
    """An entry parameter's type: a dtype and dims (ints or symbolic names)."""

    __slots__ = ("dtype", "dims")

    def __init__(self, dtype, dims):
        self.dtype = dtype
        self.dims = tuple(dims)

    def __repr__(self):
        return f"{self.dtype!r}[{', '.join(repr(d) for d in self.dims) or '()'}]"

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.dtype, self.dims) == (other.dtype, other.dims)

    def __hash__(self):
        return hash((self.dtype.name, self.dims))


f32 = DType("f32", np.float32)
f16 = DType("f16", np.float16)
i32 = DType("i32", np.int32)
i64 = DType("i64", np.int64)
bool_ = DType("bool", np.bool_)

ALL = (f32, f16, i32, i64, bool_)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def from_name(name):
    return _BY_NAME[name]


def from_numpy(np_dtype):
    """The sg dtype of a NumPy dtype; None when there is none (float64, uint8...)."""
    return _BY_NP.get(np.dtype(np_dtype))


def resolve(dtype):
    """Accepts sg dtypes, their names ('f32') and the matching NumPy dtypes."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    if dtype is bool:
        return bool_
    try:
        found = from_numpy(dtype)
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"unsupported dtype {dtype!r} (use sg.f32, sg.f16, sg.i32, sg.i64 or sg.bool)")
    return found


def describe(dtype, shape):
    """'f32[2, 3]', the way the compiler and graph-run print types."""
    return f"{dtype.name}[{', '.join(str(d) for d in shape)}]"
