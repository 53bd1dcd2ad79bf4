"""sg.custom_op: an op the op table lacks, declared by the program (SPEC §7).

    def swish_eager(x):
        return x * sg.sigmoid(x)

    def swish_result(x):
        return x.dtype, x.shape

    swish = sg.custom_op("my_ns.swish", fn=swish_eager, result=swish_result)

In eager mode a call runs `fn` on the operands and checks its result against the
dtype and shape `result` declares. graph-compile stages `result` at compile time
and records a `custom` node named "my_ns.swish"; the application registers its
kernel with the runtime (stagegraph/custom_op.h).
"""

from . import _dtypes as dt
from ._tensor import Tensor, to_tensor


class CustomOp:
    __slots__ = ("name", "fn", "result")

    def __init__(self, name, fn, result):
        if not isinstance(name, str) or not name:
            raise TypeError(f"sg.custom_op: the op name must be a non-empty string, got {name!r}")
        if not callable(fn) or not callable(result):
            raise TypeError("sg.custom_op: fn and result must be functions")
        self.name, self.fn, self.result = name, fn, result

    def __call__(self, *operands, **kwargs):
        if kwargs:
            raise TypeError(f"custom op '{self.name}' takes its operands as positional arguments")
        xs = [to_tensor(x, what=f"custom op '{self.name}'") for x in operands]
        declared = self.result(*xs)
        if not isinstance(declared, (tuple, list)) or len(declared) != 2 or not isinstance(declared[0], dt.DType):
            raise TypeError(f"custom op '{self.name}': its result rule must return (dtype, shape), got {declared!r}")
        want_dtype = declared[0]
        want_shape = tuple(int(d) for d in declared[1]) if isinstance(declared[1], (tuple, list)) \
            else (int(declared[1]),)
        out = to_tensor(self.fn(*xs), what=f"custom op '{self.name}'")
        if out.dtype != want_dtype or out.shape != want_shape:
            raise TypeError(f"custom op '{self.name}': fn returned {out.dtype.name}{list(out.shape)}, "
                            f"its result rule declares {want_dtype.name}{list(want_shape)}")
        return out

    def __repr__(self):
        return f"<custom op {self.name!r}>"


def custom_op(name, fn, result):
    """Declares the custom op `name`: `fn(*operands)` computes it in eager mode,
    `result(*operands)` returns its (dtype, shape)."""
    return CustomOp(name, fn, result)


__all__ = ["CustomOp", "custom_op", "Tensor"]
