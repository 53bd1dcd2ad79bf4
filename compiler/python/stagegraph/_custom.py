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

A custom op is differentiable (SPEC §11) when it is given `vjp`:

    def swish_vjp(x, out, g):
        s = sg.sigmoid(x)
        return (g * (s + x * s * (1 - s)),)

    swish = sg.custom_op("my_ns.swish", fn=swish_eager, result=swish_result, vjp=swish_vjp)

`vjp(*operands, output, cotangent)` returns a tuple with one cotangent per operand,
each of that operand's shape (None: no gradient). It is written with the op
library, like `fn`. Without `vjp`, differentiating through the op is a TypeError
naming it.
"""

from . import _dtypes as dt
from ._tape import defvjp, differentiable
from ._tensor import Tensor, to_tensor


class CustomOp:
    __slots__ = ("name", "fn", "result", "vjp")

    def __init__(self, name, fn, result, vjp=None):
        if not isinstance(name, str) or not name:
            raise TypeError(f"sg.custom_op: the op name must be a non-empty string, got {name!r}")
        if not callable(fn) or not callable(result):
            raise TypeError("sg.custom_op: fn and result must be functions")
        if vjp is not None and not callable(vjp):
            raise TypeError("sg.custom_op: vjp must be a function")
        self.name, self.fn, self.result, self.vjp = name, fn, result, vjp

    def __call__(self, *operands, **kwargs):
        if kwargs:
            raise TypeError(f"custom op '{self.name}' takes its operands as positional arguments")
        xs = [to_tensor(x, what=f"custom op '{self.name}'") for x in operands]
        return _apply(self, xs)

    def _run(self, xs):
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

    def pullback(self, xs, out, g):
        """The operands' cotangents by the op's vjp rule."""
        if self.vjp is None:
            raise TypeError(f"sg.grad: custom op '{self.name}' has no gradient; declare it with "
                            "sg.custom_op(..., vjp=...) to differentiate through it")
        cts = self.vjp(*xs, out, g)
        if len(xs) == 1 and not isinstance(cts, (tuple, list)):
            cts = (cts,)
        if not isinstance(cts, (tuple, list)) or len(cts) != len(xs):
            raise TypeError(f"custom op '{self.name}': its vjp must return a tuple of {len(xs)} "
                            f"cotangent(s), one per operand, got {cts!r}")
        return list(cts)

    def __repr__(self):
        return f"<custom op {self.name!r}>"


@differentiable("custom", lists=("operands",))
def _apply(op, operands):
    return op._run(operands)


defvjp("custom", operands=lambda g, out, op, operands: op.pullback(operands, out, g))


def custom_op(name, fn, result, vjp=None):
    """Declares the custom op `name`: `fn(*operands)` computes it in eager mode,
    `result(*operands)` returns its (dtype, shape), and the optional
    `vjp(*operands, output, cotangent)` returns a tuple of the operands' cotangents
    (None for an operand without one), which makes the op differentiable."""
    return CustomOp(name, fn, result, vjp)


__all__ = ["CustomOp", "custom_op", "Tensor"]
