"""Edge cases of the op library with expectations written by hand from SPEC.md
§3, §7 and §9 and NumPy's semantics, not computed: test_op_edge_cases.py checks
both the compiled graph and eager mode against them.

PROGRAM is compiled once; each Case runs one of its entries. A line ending in
`# @tag` is where a run-time error must point (FILE:LINE:COL: error: ...).
"""

import numpy as np

NAN = np.nan
INF = np.inf
I32_MAX, I32_MIN = 2**31 - 1, -2**31
I64_MAX, I64_MIN = 2**63 - 1, -2**63

PROGRAM = '''"""Op edge cases (tests/e2e/op_edge_cases.py)."""
import stagegraph as sg


@sg.function
def int_div(a: sg.i32["N"], b: sg.i32["N"]):
    return {"q": a // b, "r": a % b}


@sg.function
def int64_div(a: sg.i64["N"], b: sg.i64["N"]):
    return {"q": a // b, "r": a % b}


@sg.function
def floordiv_zero(a: sg.i32["N"], b: sg.i32["N"]):
    q = a // b  # @floordiv_zero
    return q


@sg.function
def mod_zero(a: sg.i64["N"], b: sg.i64["N"]):
    r = a % b  # @mod_zero
    return r


@sg.function
def arange_zero_step(step: sg.f32):
    x = sg.arange(0.0, 5.0, step)  # @arange_zero_step
    return sg.sum(x)


@sg.function
def arange_zero_int_step(step: sg.i64):
    x = sg.arange(0, 5, step)  # @arange_zero_int_step
    return sg.sum(x)


@sg.function
def float_div(a: sg.f32["N"], b: sg.f32["N"]):
    return {"q": a // b, "r": a % b, "t": a / b}


@sg.function
def int_true_div(a: sg.i32["N"], b: sg.i32["N"]):
    return a / b


@sg.function
def wrap32(a: sg.i32["N"], b: sg.i32["N"]):
    return {"add": a + b, "sub": a - b, "mul": a * b, "neg": -a, "abs": sg.abs(a)}


@sg.function
def wrap64(a: sg.i64["N"], b: sg.i64["N"]):
    return {"add": a + b, "sub": a - b, "mul": a * b, "neg": -a, "q": a // b, "r": a % b}


@sg.function
def int_pow(a: sg.i32["N"], b: sg.i32["N"]):
    return a ** b


@sg.function
def widening(a: sg.i32["N"], b: sg.bool["N"]):
    return {"sum": sg.sum(a), "cumsum": sg.cumsum(a, axis=0), "prod": sg.prod(a[:2]),
            "sum_bool": sg.sum(b), "cumsum_bool": sg.cumsum(b, axis=-1)}


@sg.function
def nan_1d(x: sg.f32["N"]):
    v, i = sg.topk(x, 2)
    return {"max": sg.max(x), "min": sg.min(x), "argmax": sg.argmax(x), "argmin": sg.argmin(x),
            "sort": sg.sort(x), "argsort": sg.argsort(x), "topk_v": v, "topk_i": i,
            "maximum": sg.maximum(x, 2.0), "minimum": sg.minimum(x, 2.0), "clip": sg.clip(x, 0.0, 2.0),
            "relu": sg.relu(x), "cumsum": sg.cumsum(x, axis=0), "sum": sg.sum(x), "mean": sg.mean(x),
            "isnan": sg.isnan(x)}


@sg.function
def nan_2d(x: sg.f32["N", 2]):
    return {"max": sg.max(x, axis=-1), "min0": sg.min(x, axis=0), "argmax": sg.argmax(x, axis=-1),
            "argmin0": sg.argmin(x, axis=0), "sort0": sg.sort(x, axis=0), "argsort0": sg.argsort(x, axis=0)}


@sg.function
def ties(v: sg.i32["N"]):
    t3v, t3i = sg.topk(v, 3)
    tav, tai = sg.topk(v, 5)
    return {"argsort": sg.argsort(v), "sort": sg.sort(v), "t3v": t3v, "t3i": t3i, "tav": tav, "tai": tai,
            "argmax": sg.argmax(v), "argmin": sg.argmin(v)}


@sg.function
def ties_2d(m: sg.f32[3, 2], b: sg.bool["N"]):
    bv, bi = sg.topk(b, 2)
    return {"argsort0": sg.argsort(m, axis=0), "argsort_neg": sg.argsort(m, axis=-1),
            "topk_i": sg.topk(m, 2, axis=0)[1], "bool_v": bv, "bool_i": bi, "bool_argsort": sg.argsort(b)}


@sg.function
def empty_reductions(x: sg.f32["N"], i: sg.i32["N"], b: sg.bool["N"], e: sg.f32["N", 3]):
    tv, ti = sg.topk(x, 0)
    return {"sum": sg.sum(x), "sum_i": sg.sum(i), "prod": sg.prod(x), "prod_i": sg.prod(i),
            "any": sg.any(b), "all": sg.all(b), "mean": sg.mean(x), "mean_i": sg.mean(i),
            "sum_b": sg.sum(b), "cumsum": sg.cumsum(x, axis=0), "sort": sg.sort(x), "argsort": sg.argsort(x),
            "topk_v": tv, "topk_i": ti, "sum_e0": sg.sum(e, axis=0), "mean_e0": sg.mean(e, axis=0),
            "max_e1": sg.max(e, axis=1), "argmax_e1": sg.argmax(e, axis=-1)}


@sg.function
def empty_max(x: sg.f32["N"]):
    return sg.max(x)  # @empty_max


@sg.function
def empty_argmin(x: sg.i64["N", 2]):
    return sg.argmin(x, axis=0)  # @empty_argmin


@sg.function
def rounding(x: sg.f32["N"]):
    return {"round": sg.round(x), "floor": sg.floor(x), "ceil": sg.ceil(x), "sign": sg.sign(x),
            "i32": x.astype(sg.i32), "bool": x.astype(sg.bool)}


@sg.function
def one_hot_range(i: sg.i64["N"]):
    return sg.one_hot(i, 3, dtype=sg.i32)


@sg.function
def take_out_of_range(x: sg.f32[3], i: sg.i64["N"]):
    return sg.take(x, i)  # @take_out_of_range


@sg.function
def index_out_of_range(x: sg.f32[3, 2], i: sg.i64):
    return x[i]  # @index_out_of_range


@sg.function
def gather_out_of_range(x: sg.f32[3, 2], i: sg.i64["N"]):
    return x[i]  # @gather_out_of_range


@sg.function
def scatter_out_of_range(x: sg.f32[3, 2], i: sg.i64["N"]):
    x[:, i] = 1.0  # @scatter_out_of_range
    return x


@sg.function
def mask_mismatch(x: sg.f32["N"], m: sg.bool["M"]):
    return x[m]  # @mask_mismatch


@sg.function
def negative_int_pow(a: sg.i64["N"], b: sg.i64["N"]):
    return a ** b  # @negative_int_pow


@sg.function
def float_specials(x: sg.f32["N"]):
    return {"log": sg.log(x), "sqrt": sg.sqrt(x), "rsqrt": sg.rsqrt(x), "exp": sg.exp(x), "tanh": sg.tanh(x),
            "sigmoid": sg.sigmoid(x), "eq": x == x, "ne": x != x, "lt": x < 1.0, "pow0": x ** 0.0}


@sg.function
def more_ordering(x: sg.f32["N"], b: sg.bool["N"]):
    v, i = sg.topk(x, 3)
    return {"argsort": sg.argsort(x), "topk_v": v, "topk_i": i, "argmax_b": sg.argmax(b), "max_b": sg.max(b),
            "clip_crossed": sg.clip(x, 3.0, 1.0)}


@sg.function
def narrowing(a: sg.i64["N"], x: sg.f32["N"], i: sg.i32["N"]):
    return {"to_i32": a.astype(sg.i32), "to_f16": x.astype(sg.f16), "mean_i32": sg.mean(i),
            "f16_sum": sg.sum(x.astype(sg.f16)), "f16_add": x.astype(sg.f16) + x.astype(sg.f16)}


@sg.function
def softmax_inf(x: sg.f32["N", 2], y: sg.f32[2]):
    return {"softmax": sg.softmax(x), "log_softmax": sg.log_softmax(x, axis=-1), "far": sg.log_softmax(y),
            "far_axis0": sg.log_softmax(sg.reshape(x, (2, -1)), axis=0)}


@sg.function
def softmax_empty(x: sg.f32["N", 3]):
    return {"softmax": sg.softmax(x, axis=0), "log_softmax": sg.log_softmax(x, axis=-2)}


@sg.function
def range_zero_step(step: sg.i64):
    t = sg.zeros((), dtype=sg.i64)
    for i in range(0, 10, step):  # @range_zero_step
        t = t + i
    return t


@sg.function
def static_arange(x: sg.f32["N"]):
    # Bounds that are 0-d tensors computed at compile time, float and int.
    # f32 bounds count in f32, as NumPy does: 0.3f / 0.1f is 3, not 3.0000000745.
    third = sg.arange(sg.full((), 0.0), sg.full((), 0.3), sg.full((), 0.1))
    return {"f": sg.arange(sg.full((), 2.5)) + sg.sum(x), "i": sg.arange(sg.full((), 3, dtype=sg.i32), 7, 2),
            "third": third + sg.sum(x)}


@sg.function
def signed_zero(x: sg.f32["N"]):
    return {"mul": 1.0 / (x * -0.0), "minimum": 1.0 / sg.minimum(x, -0.0), "add": 1.0 / (x * 0.0 + -0.0)}


@sg.function
def split_symbolic(x: sg.f32["N"]):
    a, b = sg.split(x, 2)  # @split_symbolic
    return a, b


@sg.function
def axis_none(x: sg.f32[3, 4], i: sg.i64["K"]):
    return {"take": sg.take(x, i, axis=None), "softmax": sg.softmax(x, axis=None),
            "log_softmax": sg.log_softmax(x, axis=None), "concatenate": sg.concatenate([x, x[0]], axis=None)}


@sg.function
def int_math(i: sg.i32["N"]):
    return {"sin": sg.sin(i), "cos": sg.cos(i), "gelu": sg.gelu(i * -1), "gelu_folded": sg.gelu(sg.full((2,), -6.0))}


@sg.function
def subnormals(x: sg.f32["N"], t: sg.f32["N"], s: sg.f32["N"]):
    return {"floor": sg.floor(x), "ceil": sg.ceil(x), "sqrt": sg.sqrt(x), "square": sg.square(t),
            "sigmoid": sg.sigmoid(s)}


@sg.function
def sigmoid_tail(x: sg.f32["N"], h: sg.f16["N"]):
    return {"f32": sg.sigmoid(x), "f16": sg.sigmoid(h)}


@sg.function
def cumsum_signed_zero(x: sg.f32["N"], h: sg.f16["N"]):
    return {"f32": 1.0 / sg.cumsum(x, axis=0), "f16": 1.0 / sg.cumsum(h, axis=0).astype(sg.f32)}


@sg.function
def wide_float_accumulation(x: sg.f32["N"], y: sg.f32["N"]):
    return {"sum": sg.sum(x), "mean": sg.mean(x, axis=0), "prod": sg.prod(y, keepdims=True)}


@sg.function
def add_zero(x: sg.f32["N"], h: sg.f16["N"]):
    return {"add": 1.0 / (x + 0.0), "radd": 1.0 / (0.0 + x), "sub": 1.0 / (x - -0.0), "add_neg": 1.0 / (x + -0.0),
            "sub_zero": 1.0 / (x - 0.0), "f16": 1.0 / (h + 0.0).astype(sg.f32)}


@sg.function
def empty_int_div(a: sg.i32["N", 3], b: sg.i32[3], e: sg.i64):
    return {"q": a // b, "r": a % 0, "p": a.astype(sg.i64) ** e}


@sg.function
def staged_float_arange(a: sg.f32, b: sg.f32, s: sg.f32):
    return {"f32": sg.arange(a, b, s), "lit": sg.arange(0.0, b, 0.1), "f16": sg.arange(a, b, s, dtype=sg.f16)}


@sg.function
def windows(x: sg.f32[1, 2, 2, 1], w: sg.f32[2, 2, 1, 1]):
    return {"conv_same": sg.conv2d(x, w, padding="SAME"), "avg_same": sg.avg_pool2d(x, 2, stride=1, padding="SAME"),
            "max_same": sg.max_pool2d(-x, 2, stride=1, padding="SAME")}
'''

# A program whose compilation must fail: a reduction without identity over an
# axis that is statically empty (SPEC §7: a compile-time error at the call's line).
STATIC_EMPTY_PROGRAM = '''"""Op edge cases: statically empty max (tests/e2e/op_edge_cases.py)."""
import stagegraph as sg


@sg.function
def static_empty_max(x: sg.f32[0, 3]):
    return sg.max(x, axis=0)  # @static_empty_max
'''


class Error:
    """An expected failure: the exit status and words the message must hold; the
    message must point at the line tagged `tag`."""

    def __init__(self, exit_code, words, tag, eager=None):
        self.exit_code = exit_code
        self.words = words
        self.tag = tag
        self.eager = eager  # the exception eager mode raises (None: not checked)


def i32(*v):
    return np.array(v, np.int32)


def i64(*v):
    return np.array(v, np.int64)


def f32(*v):
    return np.array(v, np.float32)


def bools(*v):
    return np.array(v, np.bool_)


# (name, entry, inputs, expected outputs or Error[, outputs compared within SPEC §1's
# tolerance instead of exactly: results of exp, log and the like])
CASES = [
    # SPEC §3: `//` and `%` floor like Python; the sign of `%` follows the divisor.
    ("int // and % floor", "int_div",
     {"a": i32(7, -7, 7, -7, 0, 6, I32_MIN), "b": i32(2, 2, -2, -2, 3, -3, -1)},
     {"q": i32(3, -4, -4, 3, 0, -2, I32_MIN), "r": i32(1, 1, -1, -1, 0, 0, 0)}),
    ("i64 // and % floor, MIN // -1 wraps", "int64_div",
     {"a": i64(7, -7, I64_MIN, I64_MAX), "b": i64(-2, 2, -1, -1)},
     {"q": i64(-4, -4, I64_MIN, -I64_MAX), "r": i64(-1, 1, 0, 0)}),
    ("int // by zero is a run-time error", "floordiv_zero",
     {"a": i32(1, 2), "b": i32(1, 0)}, Error(3, ["floordiv", "zero"], "floordiv_zero", ZeroDivisionError)),
    ("int % by zero is a run-time error", "mod_zero",
     {"a": i64(5), "b": i64(0)}, Error(3, ["mod", "zero"], "mod_zero", ZeroDivisionError)),
    ("float // % / by zero: inf and nan", "float_div",
     {"a": f32(7.5, -7.5, 7.5, 1.0, -1.0, 0.0), "b": f32(2, 2, -2, 0, 0, 0)},
     {"q": f32(3, -4, -4, INF, -INF, NAN), "r": f32(1.5, 0.5, -0.5, NAN, NAN, NAN),
      "t": f32(3.75, -3.75, -3.75, INF, -INF, NAN)}),
    ("int / int is f32, by zero inf and nan", "int_true_div",
     {"a": i32(1, -1, 0, 7), "b": i32(0, 0, 0, 2)}, f32(INF, -INF, NAN, 3.5)),
    # SPEC §3: integer overflow wraps around (two's complement).
    ("i32 overflow wraps", "wrap32",
     {"a": i32(I32_MAX, I32_MIN, 65536, 3), "b": i32(1, 1, 65536, -1)},
     {"add": i32(I32_MIN, I32_MIN + 1, 131072, 2), "sub": i32(I32_MAX - 1, I32_MAX, 0, 4),
      "mul": i32(I32_MAX, I32_MIN, 0, -3), "neg": i32(-I32_MAX, I32_MIN, -65536, -3),
      "abs": i32(I32_MAX, I32_MIN, 65536, 3)}),
    ("i64 overflow wraps", "wrap64",
     {"a": i64(I64_MAX, I64_MIN), "b": i64(1, -1)},
     {"add": i64(I64_MIN, I64_MAX), "sub": i64(I64_MAX - 1, I64_MIN + 1), "mul": i64(I64_MAX, I64_MIN),
      "neg": i64(-I64_MAX, I64_MIN), "q": i64(I64_MAX, I64_MIN), "r": i64(0, 0)}),
    ("i32 ** wraps", "int_pow",
     {"a": i32(2, 2, -2, 3, 7, -1), "b": i32(31, 32, 31, 40, 0, 3)},
     i32(I32_MIN, 0, I32_MIN, 689956897, 1, -1)),
    # SPEC §3: sum, prod, cumsum of i32 and bool give i64, so they do not wrap at 2**31.
    ("i32 and bool sums widen to i64", "widening",
     {"a": i32(65536, 65536, I32_MAX, I32_MAX), "b": bools(True, True, False, True)},
     {"sum": np.array(2 * 65536 + 2 * I32_MAX, np.int64),
      "cumsum": i64(65536, 131072, 131072 + I32_MAX, 131072 + 2 * I32_MAX),
      "prod": np.array(2**32, np.int64), "sum_bool": np.array(3, np.int64), "cumsum_bool": i64(1, 2, 2, 3)}),
    # NaN propagates (NumPy): max/min give NaN, argmax/argmin the first NaN, sort puts NaN
    # last; topk counts NaN as the largest value, ties by the lower index.
    ("NaN through reductions and ordering", "nan_1d",
     {"x": f32(1, NAN, 3, NAN)},
     {"max": np.float32(NAN), "min": np.float32(NAN), "argmax": np.int64(1), "argmin": np.int64(1),
      "sort": f32(1, 3, NAN, NAN), "argsort": i64(0, 2, 1, 3), "topk_v": f32(NAN, NAN), "topk_i": i64(1, 3),
      "maximum": f32(2, NAN, 3, NAN), "minimum": f32(1, NAN, 2, NAN), "clip": f32(1, NAN, 2, NAN),
      "relu": f32(1, NAN, 3, NAN), "cumsum": f32(1, NAN, NAN, NAN), "sum": np.float32(NAN),
      "mean": np.float32(NAN), "isnan": bools(False, True, False, True)}),
    ("NaN along an axis", "nan_2d",
     {"x": np.array([[1, NAN], [3, 2], [-INF, -INF]], np.float32)},
     {"max": f32(NAN, 3, -INF), "min0": f32(-INF, NAN), "argmax": i64(1, 0, 0), "argmin0": i64(2, 0),
      "sort0": np.array([[-INF, -INF], [1, 2], [3, NAN]], np.float32),
      "argsort0": np.array([[2, 2], [0, 1], [1, 0]], np.int64)}),
    # SPEC §7: argsort is stable; topk is largest first, ties by the lower index.
    ("ties in argsort, topk, argmax", "ties",
     {"v": i32(2, 1, 2, 1, 3)},
     {"argsort": i64(1, 3, 0, 2, 4), "sort": i32(1, 1, 2, 2, 3), "t3v": i32(3, 2, 2), "t3i": i64(4, 0, 2),
      "tav": i32(3, 2, 2, 1, 1), "tai": i64(4, 0, 2, 1, 3), "argmax": np.int64(4), "argmin": np.int64(1)}),
    ("ties along axes and in bools", "ties_2d",
     {"m": np.array([[1, 2], [1, 1], [0, 2]], np.float32), "b": bools(False, True, True, False)},
     {"argsort0": np.array([[2, 1], [0, 0], [1, 2]], np.int64),
      "argsort_neg": np.array([[0, 1], [0, 1], [0, 1]], np.int64),
      "topk_i": np.array([[0, 0], [1, 2]], np.int64), "bool_v": bools(True, True), "bool_i": i64(1, 2),
      "bool_argsort": i64(0, 3, 1, 2)}),
    # Empty reductions (NumPy): sum 0, prod 1, any False, all True, mean NaN.
    ("empty reductions", "empty_reductions",
     {"x": f32(), "i": i32(), "b": bools(), "e": np.zeros((0, 3), np.float32)},
     {"sum": np.float32(0), "sum_i": np.int64(0), "prod": np.float32(1), "prod_i": np.int64(1),
      "any": np.bool_(False), "all": np.bool_(True), "mean": np.float32(NAN), "mean_i": np.float32(NAN),
      "sum_b": np.int64(0), "cumsum": f32(), "sort": f32(), "argsort": i64(), "topk_v": f32(), "topk_i": i64(),
      "sum_e0": f32(0, 0, 0), "mean_e0": f32(NAN, NAN, NAN), "max_e1": f32(), "argmax_e1": i64()}),
    # NumPy: arange with a step of 0 is an error; a staged step is checked at run time.
    ("arange with a float step of 0 is a run-time error", "arange_zero_step",
     {"step": np.array(0, np.float32)}, Error(3, ["arange", "step", "zero"], "arange_zero_step", ValueError)),
    ("arange with an integer step of 0 is a run-time error", "arange_zero_int_step",
     {"step": np.array(0, np.int64)}, Error(3, ["arange", "step", "zero"], "arange_zero_int_step", ValueError)),
    ("arange with a staged float step", "arange_zero_step",
     {"step": np.array(0.5, np.float32)}, np.float32(22.5)),
    ("max of an empty axis is a run-time error", "empty_max",
     {"x": f32()}, Error(3, ["max", "zero-size"], "empty_max", ValueError)),
    ("argmin of an empty axis is a run-time error", "empty_argmin",
     {"x": np.zeros((0, 2), np.int64)}, Error(3, ["argmin", "zero-size"], "empty_argmin", ValueError)),
    # round is half to even (NumPy's rint); casts to int truncate toward zero.
    ("rounding and casts", "rounding",
     {"x": f32(0.5, 1.5, 2.5, -0.5, -1.5, -1.7, 1.7, 0.0)},
     {"round": f32(0, 2, 2, -0.0, -2, -2, 2, 0), "floor": f32(0, 1, 2, -1, -2, -2, 1, 0),
      "ceil": f32(1, 2, 3, -0.0, -1, -1, 2, 0), "sign": f32(1, 1, 1, -1, -1, -1, 1, 0),
      "i32": i32(0, 1, 2, 0, -1, -1, 1, 0), "bool": bools(True, True, True, True, True, True, True, False)}),
    # SPEC §7: an index outside [0, depth) gives an all-zero row (negative ones too).
    ("one_hot out of range", "one_hot_range",
     {"i": i64(0, 2, 3, -1)},
     np.array([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], np.int32)),
    # SPEC §7: take with an index outside [-n, n) is a run-time error naming the op.
    ("take out of range is a run-time error", "take_out_of_range",
     {"x": f32(1, 2, 3), "i": i64(0, -3, 3)}, Error(3, ["take"], "take_out_of_range", IndexError)),
    # SPEC §7: a staged index outside [-n, n) is a run-time error naming the line.
    ("staged index out of range is a run-time error", "index_out_of_range",
     {"x": np.zeros((3, 2), np.float32), "i": np.array(-4, np.int64)},
     Error(3, ["slice", "index -4"], "index_out_of_range", IndexError)),
    # SPEC §7: a tensor index outside [-n, n), read or written, is a run-time error naming
    # the op and the line; negative ones inside it wrap.
    ("x[idx] out of range is a run-time error", "gather_out_of_range",
     {"x": np.zeros((3, 2), np.float32), "i": i64(-3, 2, 3)},
     Error(3, ["take", "index 3"], "gather_out_of_range", IndexError)),
    ("x[:, idx] = v out of range is a run-time error", "scatter_out_of_range",
     {"x": np.zeros((3, 2), np.float32), "i": i64(-2, -3)},
     Error(3, ["scatter", "index -3"], "scatter_out_of_range", IndexError)),
    # A mask whose length only the binding decides is checked when it runs.
    ("x[mask] of another length is a run-time error", "mask_mismatch",
     {"x": f32(1, 2, 3), "m": bools(True, False)},
     Error(3, ["boolean index"], "mask_mismatch", IndexError)),
    # NumPy: integers to negative integer powers are an error (a run-time one here).
    ("int ** negative is a run-time error", "negative_int_pow",
     {"a": i64(2, 2), "b": i64(1, -1)}, Error(3, ["pow", "negative"], "negative_int_pow", ValueError)),
    # IEEE specials as NumPy gives them; NaN compares unequal to everything.
    ("float specials", "float_specials",
     {"x": f32(0, -1, INF, -INF, NAN)},
     {"log": f32(-INF, NAN, INF, NAN, NAN), "sqrt": f32(0, NAN, INF, NAN, NAN), "rsqrt": f32(INF, NAN, 0, NAN, NAN),
      "exp": f32(1, np.exp(np.float32(-1)), INF, 0, NAN), "tanh": f32(0, np.tanh(np.float32(-1)), 1, -1, NAN),
      "sigmoid": f32(0.5, 1 / (1 + np.exp(np.float32(1))), 1, 0, NAN),
      "eq": bools(True, True, True, True, False), "ne": bools(False, False, False, False, True),
      "lt": bools(True, True, False, True, False), "pow0": f32(1, 1, 1, 1, 1)}, {"exp", "tanh", "sigmoid"}),
    # NaN is the largest for topk and sorts last; inf below NaN; clip with lo > hi gives hi.
    ("ordering with inf and NaN, bool max", "more_ordering",
     {"x": f32(-INF, NAN, 1, INF), "b": bools(False, True, True, False)},
     {"argsort": i64(0, 2, 3, 1), "topk_v": f32(NAN, INF, 1), "topk_i": i64(1, 3, 2),
      "argmax_b": np.int64(1), "max_b": np.bool_(True), "clip_crossed": f32(1, NAN, 1, 1)}),
    # Python: range() with a step of 0 is an error; a staged step is checked at run time.
    ("range with a staged step of 0 is a run-time error", "range_zero_step",
     {"step": np.array(0, np.int64)}, Error(3, ["range", "zero"], "range_zero_step", ValueError)),
    ("range with a staged negative step", "range_zero_step", {"step": np.array(-2, np.int64)}, np.int64(0)),
    ("range with a staged step", "range_zero_step", {"step": np.array(3, np.int64)}, np.int64(18)),
    ("arange with compile-time tensor bounds", "static_arange", {"x": f32(1, 2)},
     {"f": f32(3, 4, 5), "i": i64(3, 5), "third": f32(3, 3.1, 3.2)}),
    # NaN above +inf even where +inf comes first.
    ("topk with +inf before NaN", "more_ordering",
     {"x": f32(-INF, INF, NAN, 1), "b": bools(True, False, True, False)},
     {"argsort": i64(0, 3, 1, 2), "topk_v": f32(NAN, INF, 1), "topk_i": i64(2, 1, 3),
      "argmax_b": np.int64(0), "max_b": np.bool_(True), "clip_crossed": f32(1, 1, NAN, 1)}),
    # -0.0 keeps its sign through every kernel, vector lanes included (9 elements:
    # a full 8-lane vector and a tail), so 1 / -0.0 is -inf.
    ("signed zero", "signed_zero",
     {"x": np.full(9, 0.5, np.float32)},
     {"mul": np.full(9, -INF, np.float32), "minimum": np.full(9, -INF, np.float32),
      "add": np.full(9, INF, np.float32)}),
    # NumPy: split into sections that do not divide the axis is an error.
    ("split of a symbolic dim that does not divide", "split_symbolic",
     {"x": f32(0, 1, 2, 3, 4)}, Error(3, ["split", "equal division"], "split_symbolic", ValueError)),
    ("split of a symbolic dim that divides", "split_symbolic",
     {"x": f32(0, 1, 2, 3)}, {"output_0": f32(0, 1), "output_1": f32(2, 3)}),
    # axis=None: take indexes the flattened tensor, concatenate joins flattened tensors,
    # softmax normalizes over all elements.
    ("axis=None in take and softmax", "axis_none",
     {"x": np.arange(12, dtype=np.float32).reshape(3, 4), "i": i64(0, 7, 11, -1)},
     {"take": f32(0, 7, 11, 11), "concatenate": np.concatenate([np.arange(12), np.arange(4)]).astype(np.float32),
      "softmax": (np.exp(np.arange(12) - 11.0) / np.exp(np.arange(12) - 11.0).sum()).astype(np.float32).reshape(3, 4),
      "log_softmax": ((np.arange(12) - 11.0) - np.log(np.exp(np.arange(12) - 11.0).sum())).astype(np.float32)
      .reshape(3, 4)},
     {"softmax", "log_softmax"}),
    # SPEC §3: ints give f32, as eager mode's astype does (2**31 - 1 rounds to 2**31);
    # gelu's tail below -4 does not cancel to 0, folded at compile time or not.
    ("math of ints and gelu's tail", "int_math",
     {"i": i32(I32_MAX, 5, 6)},
     {"sin": np.sin(f32(2**31, 5, 6)), "cos": np.cos(f32(2**31, 5, 6)),
      "gelu": f32(-2**31 * 0.0, -1.4332579e-06, -5.9195259e-09), "gelu_folded": f32(-5.9195259e-09, -5.9195259e-09)},
     {"sin", "cos", "gelu", "gelu_folded"}),
    # Casts wrap (i64 -> i32) and round to nearest (f32 -> f16, overflowing to inf);
    # mean of i32 does not wrap; f16 sums accumulate wider and round once.
    ("narrowing casts and wide accumulation", "narrowing",
     {"a": i64(2**31, -2**31 - 1, 2**32 + 5), "x": f32(65520, 1e-8, 2049),
      "i": i32(I32_MAX, I32_MAX, I32_MAX)},
     {"to_i32": i32(I32_MIN, I32_MAX, 5), "to_f16": np.array([INF, 0, 2048], np.float16),
      "mean_i32": np.float32(I32_MAX), "f16_sum": np.float16(INF),
      "f16_add": np.array([INF, 0, 4096], np.float16)}),
    # SPEC §7: softmax subtracts the max first, so -inf gives 0 and large values do not overflow.
    ("softmax with -inf and large values", "softmax_inf",
     {"x": np.array([[0, -INF], [1e5, 1e5]], np.float32), "y": f32(-1e5, 1e5)},
     {"softmax": np.array([[1, 0], [0.5, 0.5]], np.float32),
      "log_softmax": np.array([[0, -INF], [-np.log(np.float32(2)), -np.log(np.float32(2))]], np.float32),
      "far": f32(-2e5, 0), "far_axis0": np.array([[-1e5, -INF], [0, 0]], np.float32)},
     {"softmax", "log_softmax", "far", "far_axis0"}),
    # A softmax along an empty axis has nothing to normalize: an empty result.
    ("softmax along an empty axis", "softmax_empty",
     {"x": np.zeros((0, 3), np.float32)},
     {"softmax": np.zeros((0, 3), np.float32), "log_softmax": np.zeros((0, 3), np.float32)}),
    # Subnormals are numbers (NumPy keeps them): floor(-1e-40) is -1, sqrt(-1e-40) NaN,
    # square and sigmoid results below FLT_MIN are not 0. XNNPACK runs with them
    # flushed to zero. 9 elements: a full vector and a tail.
    ("subnormal inputs and results", "subnormals",
     {"x": f32(-1e-40, 1e-40, -1e-45, 1e-45, -1.1e-38, 1.1e-38, 0, -0.0, 2.5),
      "t": f32(3e-20, 1e-20, 2e-20, 1e-20, 3e-20, 1e-20, 2e-20, 1e-20, 3e-20),
      "s": f32(-87.5, -88, -88.5, -87.2, -88.7, -87.5, -88, -88.5, -87.2)},
     {"floor": f32(-1, 0, -1, 0, -1, 0, 0, -0.0, 2), "ceil": f32(-0.0, 1, -0.0, 1, -0.0, 1, 0, -0.0, 3),
      "sqrt": f32(NAN, np.sqrt(np.float32(1e-40)), NAN, np.sqrt(np.float32(1e-45)), NAN,
                  np.sqrt(np.float32(1.1e-38)), 0, -0.0, np.sqrt(np.float32(2.5))),
      "square": f32(9e-40, 1e-40, 4e-40, 1e-40, 9e-40, 1e-40, 4e-40, 1e-40, 9e-40),
      "sigmoid": np.exp(np.array([-87.5, -88, -88.5, -87.2, -88.7, -87.5, -88, -88.5, -87.2])).astype(np.float32)},
     {"square", "sigmoid"}),
    # sigmoid(x) is e^x / (1 + e^x) for x < 0: where e^-x overflows (below -88.7 in
    # f32, -11.1 in f16) the result is e^x, not 1 / inf = 0.
    ("sigmoid's far negative tail", "sigmoid_tail",
     {"x": f32(-90, -95, -100, -103), "h": np.array([-12, -13, -15, -16], np.float16)},
     {"f32": np.exp(np.array([-90, -95, -100, -103], np.float64)).astype(np.float32),
      "f16": np.exp(np.array([-12, -13, -15, -16], np.float64)).astype(np.float16)}, {"f32", "f16"}),
    # NumPy's cumsum starts from the first element, so a leading -0 stays -0.
    ("cumsum keeps a leading -0", "cumsum_signed_zero",
     {"x": f32(-0.0, -0.0, 2), "h": np.array([-0.0, 4, 4], np.float16)},
     {"f32": f32(-INF, -INF, 0.5), "f16": f32(-INF, 0.25, 0.125)}),
    # f32 sums, means and products accumulate wider and round once, so a partial
    # result beyond f32's range does not make a finite result inf or 0.
    ("f32 reductions past f32's range", "wide_float_accumulation",
     {"x": f32(3e38, 3e38, -3e38, -3e38), "y": f32(1e-30, 1e-30, 1e30, 1e30)},
     {"sum": np.float32(0), "mean": np.float32(0), "prod": f32(1)}),
    ("f32 reductions past f32's range, finite", "wide_float_accumulation",
     {"x": f32(3e38, 3e38, -3e38, -2e38), "y": f32(1e20, 1e20, 1e-20, 1e-20)},
     {"sum": np.float32(1e38), "mean": np.float32(2.5e37), "prod": f32(1)}, {"sum", "mean", "prod"}),
    # -0 + 0 and -0 - -0 are +0 (IEEE, NumPy), so x + 0 is not x where x is -0;
    # x + -0 and x - 0 are.
    ("adding zero to -0", "add_zero",
     {"x": f32(-0.0, 0.0, 2), "h": np.array([-0.0, 0.0, 2], np.float16)},
     {"add": f32(INF, INF, 0.5), "radd": f32(INF, INF, 0.5), "sub": f32(INF, INF, 0.5),
      "add_neg": f32(-INF, INF, 0.5), "sub_zero": f32(-INF, INF, 0.5), "f16": f32(INF, INF, 0.5)}),
    # An empty result divides nothing: no division by zero, no negative power (NumPy).
    ("integer // 0 and ** -1 of an empty tensor", "empty_int_div",
     {"a": np.zeros((0, 3), np.int32), "b": i32(1, 0, 2), "e": np.array(-1, np.int64)},
     {"q": np.zeros((0, 3), np.int32), "r": np.zeros((0, 3), np.int32), "p": np.zeros((0, 3), np.int64)}),
    # A staged float arange counts its elements in its dtype, as NumPy does with f32
    # scalars: (0.3 - 0) / 0.1 is 3 in f32 (3.0000000745 in f64), 3.002 in f16.
    ("arange with staged f32 bounds counts in f32", "staged_float_arange",
     {"a": np.array(0, np.float32), "b": np.array(0.3, np.float32), "s": np.array(0.1, np.float32)},
     {"f32": f32(0, 0.1, 0.2), "lit": f32(0, 0.1, 0.2), "f16": np.array([0, 0.1, 0.2, 0.3], np.float16)},
     {"f32", "lit", "f16"}),
    # SPEC §7: SAME pads the odd cell at the bottom/right; avg_pool2d counts only cells
    # inside the input; max_pool2d never sees the padding.
    ("SAME windows", "windows",
     {"x": np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1), "w": np.ones((2, 2, 1, 1), np.float32)},
     {"conv_same": np.array([10, 6, 7, 4], np.float32).reshape(1, 2, 2, 1),
      "avg_same": np.array([2.5, 3, 3.5, 4], np.float32).reshape(1, 2, 2, 1),
      "max_same": np.array([-1, -2, -3, -4], np.float32).reshape(1, 2, 2, 1)}),
]
