"""The eager-mode tensor: a NumPy array behind operators that follow SPEC §3.

NumPy's own promotion differs between 1.x (value-based casting) and 2.x (NEP 50)
and produces float64, which Stagegraph does not have. So every operation first
decides the result dtype by §3's table, casts its operands to it, and only then
lets NumPy compute on operands of one dtype, where both NumPy versions agree.

Arrays inside a Tensor are never written in place except by ``__setitem__``, which
copies first; views may therefore be shared freely between tensors.
"""

import operator

import numpy as np

from . import _dtypes as dt
from . import _kernels
from . import _tape
from ._registry import op as _op
from ._tape import differentiable


def _reduction_method(name):
    """x.NAME(axis=None, keepdims=False) as sg.NAME(x, axis, keepdims)."""
    def method(self, axis=None, keepdims=False):
        return _op(name)(self, axis, keepdims)
    method.__name__ = name
    return method


class Tensor:
    # _t: None, or while sg.grad runs the trace that records how the value was made
    # (stagegraph/_tape.py); _a is then the value itself, as for any tensor.
    __slots__ = ("_a", "_t")
    __array_ufunc__ = None  # ndarray <op> Tensor defers to Tensor's reflected operator
    __hash__ = None

    def __init__(self, array):
        # NumPy gives scalars, not 0-d arrays, for full indexing and 0-d math.
        self._a = array if isinstance(array, np.ndarray) else np.asarray(array)
        self._t = None

    # ---- properties --------------------------------------------------------------
    @property
    def shape(self):
        return tuple(int(d) for d in self._a.shape)

    @property
    def ndim(self):
        return self._a.ndim

    @property
    def dtype(self):
        return dt.from_numpy(self._a.dtype)

    @property
    def size(self):
        return int(self._a.size)

    @property
    def T(self):
        return _op("transpose")(self)

    def astype(self, dtype):
        return astype(self, dtype)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _op("reshape")(self, shape)

    # NumPy's array methods for the ops of SPEC §7 that ndarray has as methods,
    # with the same arguments as the sg functions (graph-compile takes the same set).
    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _op("transpose")(self, axes if axes != () else None)

    def flatten(self):
        return _op("reshape")(self, (-1,))

    def squeeze(self, axis=None):
        return _op("squeeze")(self, axis)

    sum = _reduction_method("sum")  # noqa: A003 - ndarray's names
    mean = _reduction_method("mean")
    max = _reduction_method("max")  # noqa: A003
    min = _reduction_method("min")  # noqa: A003
    prod = _reduction_method("prod")
    any = _reduction_method("any")  # noqa: A003
    all = _reduction_method("all")  # noqa: A003
    argmax = _reduction_method("argmax")
    argmin = _reduction_method("argmin")

    def cumsum(self, axis=None):
        return _op("cumsum")(self, axis)

    def cumprod(self, axis=None):
        return _op("cumprod")(self, axis)

    def clip(self, min=None, max=None):  # noqa: A002 - ndarray.clip's names
        return _op("clip")(self, min, max)

    def round(self):
        return _op("round")(self)

    def dot(self, b):
        return _op("dot")(self, b)

    def numpy(self):
        return np.array(self._a)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def __repr__(self):
        return f"Tensor({dt.describe(self.dtype, self.shape)}, {np.array2string(self._a, threshold=8)})"

    # ---- Python protocols -----------------------------------------------------------
    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def _scalar(self, what):
        if self._a.ndim != 0:
            raise TypeError(f"{what}() needs a 0-d tensor, got shape {list(self.shape)}")
        return self._a[()]

    def __bool__(self):
        if self._a.ndim != 0:
            raise ValueError(f"the truth value of a tensor of shape {list(self.shape)} is ambiguous; "
                             "use sg.any(x) or sg.all(x)")
        return bool(self._a[()])

    def __index__(self):
        if self.dtype not in (dt.i32, dt.i64):
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype.name}")
        return int(self._scalar("index"))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    # ---- indexing -------------------------------------------------------------------
    def __getitem__(self, key):
        return getitem(self, _basic_index(key))

    def __setitem__(self, key, value):
        # Value semantics: x rebinds to an updated copy; other tensors never see it.
        updated = setitem(self, _basic_index(key), value)
        self._a, self._t = updated._a, updated._t

    # ---- operators ------------------------------------------------------------------
    def __add__(self, o): return binary("+", self, o)
    def __radd__(self, o): return binary("+", o, self)
    def __sub__(self, o): return binary("-", self, o)
    def __rsub__(self, o): return binary("-", o, self)
    def __mul__(self, o): return binary("*", self, o)
    def __rmul__(self, o): return binary("*", o, self)
    def __truediv__(self, o): return binary("/", self, o)
    def __rtruediv__(self, o): return binary("/", o, self)
    def __floordiv__(self, o): return binary("//", self, o)
    def __rfloordiv__(self, o): return binary("//", o, self)
    def __mod__(self, o): return binary("%", self, o)
    def __rmod__(self, o): return binary("%", o, self)
    def __pow__(self, o): return binary("**", self, o)
    def __rpow__(self, o): return binary("**", o, self)
    def __and__(self, o): return binary("&", self, o)
    def __rand__(self, o): return binary("&", o, self)
    def __or__(self, o): return binary("|", self, o)
    def __ror__(self, o): return binary("|", o, self)
    def __xor__(self, o): return binary("^", self, o)
    def __rxor__(self, o): return binary("^", o, self)
    def __lt__(self, o): return binary("<", self, o)
    def __le__(self, o): return binary("<=", self, o)
    def __gt__(self, o): return binary(">", self, o)
    def __ge__(self, o): return binary(">=", self, o)

    def __eq__(self, o):
        if not _is_operand(o):
            return NotImplemented
        return binary("==", self, o)

    def __ne__(self, o):
        if not _is_operand(o):
            return NotImplemented
        return binary("!=", self, o)

    def __matmul__(self, o):
        return _op("matmul")(self, o)

    def __rmatmul__(self, o):
        return _op("matmul")(o, self)

    def __neg__(self):
        return negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        if self.dtype is dt.bool_:
            return Tensor(np.abs(self._a))
        return _op("abs")(self)

    def __invert__(self):
        if self.dtype.is_float:
            raise TypeError(f"~ is not defined for {self.dtype.name} tensors")
        return Tensor(np.invert(self._a))


# ---- conversions ------------------------------------------------------------------------

def _is_operand(v):
    return isinstance(v, (Tensor, bool, int, float, np.ndarray, np.generic))


def from_numpy(a, what="value"):
    """Wraps a NumPy array; float64 becomes f32 (there is no f64), other dtypes fail."""
    a = np.asarray(a)
    d = dt.from_numpy(a.dtype)
    if d is None:
        if a.dtype == np.float64:
            return Tensor(a.astype(np.float32))
        raise TypeError(f"{what}: unsupported dtype {a.dtype} (use f32, f16, i32, i64 or bool)")
    return Tensor(a)


def scalar_dtype(v):
    """The dtype a Python number gets on its own (§3): bool, int -> i64, float -> f32."""
    if isinstance(v, (bool, np.bool_)):
        return dt.bool_
    if isinstance(v, int):
        return dt.i64
    return dt.f32


def is_py_scalar(v):
    # np.float64 scalars are Python floats; NumPy's fixed-width scalars are tensors.
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic) or isinstance(v, np.float64)


def scalar_to_array(v, dtype):
    """A Python number as a 0-d array of `dtype`, refusing ints that do not fit."""
    if dtype.is_int and not isinstance(v, float):
        info = np.iinfo(dtype.np)
        if not info.min <= int(v) <= info.max:
            raise OverflowError(f"Python integer {int(v)} is out of bounds for {dtype.name}")
    with np.errstate(all="ignore"):
        return np.array(v, dtype=dtype.np)


def to_tensor(v, like=None, what="value"):
    """Any operand as a Tensor. A Python number takes `like`'s dtype by §3's rules
    when a tensor stands beside it, else its own (int -> i64, float -> f32)."""
    if isinstance(v, Tensor):
        return v
    if is_py_scalar(v):
        d = weak_dtype(like.dtype, v) if like is not None else scalar_dtype(v)
        return Tensor(scalar_to_array(v, d))
    if isinstance(v, (np.ndarray, np.generic)):
        return from_numpy(v, what)
    if isinstance(v, (list, tuple)):
        items = [to_tensor(x, like, what) for x in v]
        if any(t._t is not None for t in items):
            _stack_same(items, what)
            return _op("stack")(items)  # keeps the gradient of traced items
        return _stack_same(items, what)
    raise TypeError(f"{what}: expected a tensor or a number, got {type(v).__name__}")


def _stack_same(items, what):
    dtypes = {t.dtype for t in items}
    if len(dtypes) > 1:
        raise TypeError(f"{what}: elements of different dtypes {sorted(d.name for d in dtypes)}")
    if not items:
        return Tensor(np.zeros((0,), np.float32))
    return Tensor(np.stack([t._a for t in items]))


def weak_dtype(tensor_dtype, scalar):
    """The dtype of `tensor <op> python_scalar` (NEP 50 with f32 for f64)."""
    if isinstance(scalar, (bool, np.bool_)):
        return tensor_dtype
    if isinstance(scalar, int):
        return dt.i64 if tensor_dtype is dt.bool_ else tensor_dtype
    return tensor_dtype if tensor_dtype.is_float else dt.f32


def common_dtype(op, operands):
    """§3's dtype for combining operands elementwise: tensors must agree; Python
    numbers follow the tensors beside them (or, alone, bool < i64 < f32)."""
    tensors = [to_tensor(v, what=op) for v in operands if not is_py_scalar(v)]
    scalars = [v for v in operands if is_py_scalar(v)]
    if tensors:
        d = tensors[0].dtype
        for t in tensors[1:]:
            if t.dtype is not d:
                raise TypeError(f"{op}: operands have different dtypes {d.name} and {t.dtype.name}; "
                                "cast one with astype")
        for v in scalars:
            d = weak_dtype(d, v)
        return d
    order = [dt.bool_, dt.i64, dt.f32]
    return max((scalar_dtype(v) for v in scalars), key=order.index)


def coerce(op, *operands):
    """Operands as arrays of their common dtype, and that dtype."""
    d = common_dtype(op, operands)
    arrays = [scalar_to_array(v, d) if is_py_scalar(v) else to_tensor(v, what=op)._a.astype(d.np, copy=False)
              for v in operands]
    return arrays, d


_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "**": np.power,
          "//": np.floor_divide, "%": np.remainder}
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}
_BITWISE = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}
# The runtime's ops for the operators (kernels/ops/op_table.h), for _kernels.run.
_KERNEL_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod", "**": "pow",
               "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
               "!=": "not_equal"}


@differentiable("binary")
def binary(op, a, b):
    if not (_is_operand(a) and _is_operand(b)):
        return NotImplemented
    (x, y), d = coerce(op, a, b)
    if op in _COMPARE:
        r = _kernels.run(_KERNEL_OPS[op], (x, y))
        if r is not None:
            return Tensor(r)
    with np.errstate(all="ignore"):
        if op in _COMPARE:
            return Tensor(np.asarray(_COMPARE[op](x, y)))
        if op in _BITWISE:
            if d.is_float:
                raise TypeError(f"{op} is defined for bool and integer tensors, not {d.name}")
            return Tensor(np.asarray(_BITWISE[op](x, y)))
        if op == "/":
            r = _kernels.run("div", (x, y))  # ints too: the kernel gives f32, as staged
            if r is not None:
                return Tensor(r)
            if not d.is_float:
                x, y, d = x.astype(np.float32), y.astype(np.float32), dt.f32
            return Tensor(np.asarray(np.true_divide(x, y), dtype=d.np))
        if d is dt.bool_:
            raise TypeError(f"{op} is not defined for bool tensors; cast with astype")
        # A divisor or exponent is used only where the result has elements (each
        # of its elements is then used at least once): an empty result has no
        # division by zero, as NumPy's loops and the runtime's kernels see it.
        used = np.broadcast(x, y).size > 0
        if d.is_int and op in ("//", "%") and used and np.any(y == 0):
            name = "floor division (//)" if op == "//" else "modulo (%)"
            raise ZeroDivisionError(f"integer {name} by zero")
        if d.is_int and op == "**" and used and np.any(y < 0):
            raise ValueError("integers to negative integer powers are not allowed")
        r = _kernels.run(_KERNEL_OPS[op], (x, y))
        if r is not None:
            return Tensor(r)
        return Tensor(np.asarray(_ARITH[op](x, y), dtype=d.np))


@differentiable("negative")
def negative(x):
    t = to_tensor(x, what="unary -")
    if t.dtype is dt.bool_:
        raise TypeError("unary - is not defined for bool tensors; use ~ or sg.logical_not")
    r = _kernels.run("neg", (t._a,))
    if r is not None:
        return Tensor(r)
    with np.errstate(all="ignore"):
        return Tensor(np.negative(t._a))


@differentiable("getitem")
def getitem(x, key):
    """x[key] for a key of _basic_index."""
    return Tensor(x._a[key])


@differentiable("setitem")
def setitem(x, key, value):
    """A copy of x with x[key] = value (key of _basic_index)."""
    v = to_tensor(value, like=x)
    if v.dtype is not x.dtype:
        raise TypeError(f"item assignment: cannot store {v.dtype.name} into a {x.dtype.name} "
                        "tensor; cast with astype")
    a = x._a.copy()
    a[key] = v._a
    return Tensor(a)


@differentiable("astype")
def astype(x, dtype):
    d = dt.resolve(dtype)
    t = to_tensor(x, what="astype")
    if t.dtype is not d:
        r = _kernels.run("cast", (t._a,), (("dtype", _kernels.DTYPE_VALUES[d.name]),))
        if r is not None:
            return Tensor(r)
    with np.errstate(all="ignore"):
        return Tensor(t._a.astype(d.np))


def _basic_index(key):
    """A key for NumPy: ints, slices, None and Ellipsis (§7's basic indexing), and
    at most one tensor index (integer indices, gathered; or a bool mask) where
    NumPy's rules give what the compiler's lowering gives (see _check_advanced)."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, slice):
            out.append(slice(*(None if v is None else operator.index(v) for v in (k.start, k.stop, k.step))))
        elif isinstance(k, (bool, np.bool_)):
            raise TypeError("bool indices are not supported; use sg.where")
        elif isinstance(k, Tensor) and k.dtype is dt.bool_ and k.ndim == 0:
            raise TypeError("a boolean scalar index is not supported; select with sg.where(cond, x, y) or an if")
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k.ndim == 0):
            out.append(operator.index(k))
        elif isinstance(k, (Tensor, np.ndarray, list, tuple)):
            a = k._a if isinstance(k, Tensor) else np.asarray(k)
            if a.dtype == np.bool_:
                if a.ndim == 0:
                    raise TypeError("a boolean scalar index is not supported; "
                                    "select with sg.where(cond, x, y) or an if")
            elif a.dtype.kind not in "iu" or (isinstance(k, (list, tuple)) and a.size == 0):
                a = a.astype(np.int64) if isinstance(k, (list, tuple)) and a.size == 0 else a
                if a.dtype.kind not in "iu":
                    raise TypeError(f"an index tensor must hold integers or bools, not {a.dtype}")
            out.append(a)
        else:
            raise TypeError(f"only basic indexing (ints, slices, None, ...) and one tensor index are "
                            f"supported, not {type(k).__name__}")
    _check_advanced(tuple(out))
    return tuple(out)


def _is_advanced(k):
    return isinstance(k, np.ndarray)


def _check_advanced(key):
    """The compiler's refusals (advanced_indexing.cc), in eager mode too."""
    adv = [k for k in key if _is_advanced(k)]
    if not adv:
        return
    tool = ("sg.where(mask) or sg.compress(mask, x, axis)" if adv[0].dtype == np.bool_
            else "sg.take(x, idx, axis)")
    if len(adv) > 1:
        raise TypeError("indexing with more than one tensor index (NumPy broadcasts them together) is not "
                        "supported; index one axis at a time with " + tool)
    if any(k is None for k in key):
        raise TypeError("None (a new axis) beside a tensor index is not supported; add the axis with "
                        "sg.expand_dims")
    # Integer items and the tensor index not adjacent: NumPy moves the indexed
    # axes to the front, which the compiler's lowering gives only when there are
    # no kept axes before the tensor index.
    at = next(i for i, k in enumerate(key) if _is_advanced(k))
    index_pos = [i for i, k in enumerate(key) if _is_advanced(k) or isinstance(k, int)]
    separated = index_pos[-1] - index_pos[0] + 1 != len(index_pos)
    kept_before = any(isinstance(k, slice) or k is Ellipsis for k in key[:at])
    if separated and kept_before:
        raise TypeError("integer indices separated from a tensor index by a slice move the indexed axes to the "
                        "front (NumPy's rule), which is not supported here; index in two steps, or use " + tool)


def _advanced_key(key):
    return any(_is_advanced(k) for k in key)


@differentiable("getitem_grad")
def getitem_grad(g, key, shape):
    """The transpose of x[key] for a key with a tensor index: g added into zeros
    of `shape` at the positions the key selects (repeated indices accumulate)."""
    a = g._a
    work = np.float64 if a.dtype == np.float32 else np.float32 if a.dtype == np.float16 else a.dtype
    out = np.zeros(shape, work)
    np.add.at(out, key, a)
    return Tensor(out.astype(a.dtype))


# _tape records ops on tensors; it reaches them through these names, never by import.
_tape.Tensor = Tensor
_tape.to_tensor = to_tensor
