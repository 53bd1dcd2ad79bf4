"""Stagegraph's op library, eager mode (SPEC §1-§3, §7).

    import stagegraph as sg

    @sg.function
    def mlp(x: sg.f32["N", 784], w: sg.f32[784, 10]):
        return sg.softmax(x @ w)

Under CPython with NumPy this module runs the program directly: an @sg.function
takes NumPy arrays and returns NumPy arrays, with SPEC §3's dtypes on NumPy 1.x and
2.x alike. graph-compile reads the same source and stages it into a graph.
sg.grad, sg.value_and_grad and sg.vjp differentiate it (SPEC §11, _autodiff.py).
"""

from ._autodiff import checkpoint, grad, stop_gradient, value_and_grad, vjp
from ._custom import CustomOp, custom_op
from ._creation import arange, eye, full, full_like, one_hot, ones, ones_like, zeros, zeros_like
from ._dtypes import DType, TensorType, f16, f32, i32, i64
from ._dtypes import bool_ as bool  # noqa: A001 - sg.bool is the bool dtype
from ._everyday import allclose, diff, einsum, flip, isclose, logaddexp, meshgrid, outer, roll
from ._elementwise import (abs, ceil, clip, cos, exp, floor, gelu, isnan, log, logical_and,  # noqa: A004
                           logical_not, logical_or, maximum, minimum, relu, round, rsqrt, sigmoid,
                           sign, sin, sqrt, square, tanh, where)
from ._indexing import compress, flatnonzero, nonzero, take
from ._linalg import dot, matmul
from ._nn import avg_pool2d, conv2d, layer_norm, log_softmax, max_pool2d, softmax
from ._ordering import argsort, cumprod, cumsum, searchsorted, sort, topk
from ._reduction import all, any, argmax, argmin, logsumexp, max, mean, min, prod, sum  # noqa: A004
from ._shape import (broadcast_to, concatenate, expand_dims, pad, reshape, split, squeeze, stack,
                     tile, transpose)
from ._staging import Function, function, load_weights, range, read_safetensors, relax, weight, write_safetensors  # noqa: A004
from ._tensor import Tensor, astype
from . import random  # noqa: E402 - sg.random, after the modules it uses
from . import nn  # noqa: E402 - sg.nn, after the modules it uses
from . import linalg  # noqa: E402 - sg.linalg, after the modules it uses
from ._tree import map_leaves as tree_map  # noqa: E402
from ._variables import variables  # noqa: E402
from . import optim  # noqa: E402 - sg.optim (SPEC §12), written in the staged language

__all__ = [
    "DType", "TensorType", "Tensor", "Function",
    "f32", "f16", "i32", "i64", "bool",
    "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu",
    "floor", "ceil", "round", "sign", "square", "maximum", "minimum", "where", "clip",
    "logical_and", "logical_or", "logical_not", "isnan",
    "sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "cumsum",
    "logsumexp", "sort", "argsort", "topk", "matmul", "dot",
    "reshape", "transpose", "expand_dims", "squeeze", "concatenate", "stack", "split",
    "broadcast_to", "tile", "pad", "take", "nonzero", "flatnonzero", "compress",
    "zeros", "ones", "full", "eye", "zeros_like", "ones_like", "full_like", "arange", "astype",
    "softmax", "log_softmax", "layer_norm", "conv2d", "max_pool2d", "avg_pool2d", "one_hot",
    "range", "relax", "function", "weight", "load_weights", "read_safetensors", "write_safetensors", "random",
    "custom_op", "CustomOp", "nn", "linalg",
    "grad", "value_and_grad", "vjp", "stop_gradient", "checkpoint", "tree_map", "optim", "variables",
    "searchsorted", "logaddexp", "cumprod", "diff", "flip", "roll", "meshgrid", "outer", "einsum", "isclose",
    "allclose",
]

# The compiled path in process (SPEC §14: sg.load, sg.compile, sg.jit), where the
# extension modules are installed (pip install .); without them the eager module
# stands alone.
import importlib.util as _importlib_util  # noqa: E402

# (sg.all and sg.any shadow the builtins here.)
if (_importlib_util.find_spec(__name__ + "._runtime") is not None
        and _importlib_util.find_spec(__name__ + "._compiler") is not None):
    from ._binding import CompileError, CompileWarning, Program, RunError, Session, compile, jit, load  # noqa: E402,A004
    __all__ += ["load", "compile", "jit", "Program", "Session", "CompileError", "CompileWarning", "RunError"]
