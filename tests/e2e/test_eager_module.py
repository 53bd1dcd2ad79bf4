"""The eager-mode module against SPEC §3 (dtypes) and §7 (op semantics).

Run by ctest with /usr/bin/python3 (NumPy 1.24); it must pass unchanged on NumPy 2.x.
"""
import math
import os
import sys
import tempfile
import unittest
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compiler", "python"))
import stagegraph as sg  # noqa: E402
from stagegraph import Tensor  # noqa: E402


def T(values, dtype):
    return Tensor(np.array(values, dtype=dtype.np))


F32 = T([1.5, -2.0, 0.25], sg.f32)
F16 = T([1.5, -2.0, 0.25], sg.f16)
I32 = T([3, -7, 0], sg.i32)
I64 = T([3, -7, 0], sg.i64)
B = T([True, False, True], sg.bool)
COND = T([True, False, True], sg.bool)

# (description, thunk, expected dtype) — SPEC §3's table, row by row.
DTYPE_CASES = [
    ("i32 + i32", lambda: I32 + I32, sg.i32),
    ("f16 * f16", lambda: F16 * F16, sg.f16),
    ("i32 + python int", lambda: I32 + 1, sg.i32),
    ("python int - i32", lambda: 1 - I32, sg.i32),
    ("i64 * python int", lambda: I64 * 3, sg.i64),
    ("f16 + python int", lambda: F16 + 1, sg.f16),
    ("bool + python int", lambda: B + 1, sg.i64),
    ("bool + python bool", lambda: B & True, sg.bool),
    ("i32 + python float", lambda: I32 + 1.5, sg.f32),
    ("bool * python float", lambda: B * 0.5, sg.f32),
    ("f16 + python float", lambda: F16 + 1.5, sg.f16),
    ("f32 + python float", lambda: F32 + 1.5, sg.f32),
    ("i32 / i32", lambda: I32 / T([1, 2, 4], sg.i32), sg.f32),
    ("i64 / python int", lambda: I64 / 2, sg.f32),
    ("bool / bool", lambda: B / B, sg.f32),
    ("f16 / python int", lambda: F16 / 2, sg.f16),
    ("i32 // python int", lambda: I32 // 2, sg.i32),
    ("i64 % i64", lambda: I64 % T([2, 2, 2], sg.i64), sg.i64),
    ("f16 ** python int", lambda: F16 ** 2, sg.f16),
    ("i32 < i32", lambda: I32 < I32, sg.bool),
    ("f16 == python float", lambda: F16 == 1.5, sg.bool),
    ("logical_and", lambda: sg.logical_and(B, B), sg.bool),
    ("logical_not", lambda: sg.logical_not(B), sg.bool),
    ("isnan of i32", lambda: sg.isnan(I32), sg.bool),
    ("any", lambda: sg.any(I32 > 0), sg.bool),
    ("all", lambda: sg.all(B), sg.bool),
    ("exp of i32", lambda: sg.exp(I32), sg.f32),
    ("log of i64", lambda: sg.log(I64), sg.f32),
    ("sqrt of bool", lambda: sg.sqrt(B), sg.f32),
    ("rsqrt of i32", lambda: sg.rsqrt(I32), sg.f32),
    ("sin cos tanh of i64", lambda: sg.tanh(sg.cos(sg.sin(I64))), sg.f32),
    ("sigmoid of i32", lambda: sg.sigmoid(I32), sg.f32),
    ("gelu of i64", lambda: sg.gelu(I64), sg.f32),
    ("exp of f16", lambda: sg.exp(F16), sg.f16),
    ("gelu of f16", lambda: sg.gelu(F16), sg.f16),
    ("exp of a python int", lambda: sg.exp(2), sg.f32),
    ("sum of bool", lambda: sg.sum(B), sg.i64),
    ("sum of i32", lambda: sg.sum(I32, axis=0), sg.i64),
    ("sum of f16", lambda: sg.sum(F16), sg.f16),
    ("prod of i32", lambda: sg.prod(I32), sg.i64),
    ("cumsum of bool", lambda: sg.cumsum(B, 0), sg.i64),
    ("cumsum of f32", lambda: sg.cumsum(F32, 0), sg.f32),
    ("mean of i32", lambda: sg.mean(I32), sg.f32),
    ("mean of bool", lambda: sg.mean(B), sg.f32),
    ("mean of f16", lambda: sg.mean(F16), sg.f16),
    ("max of i32", lambda: sg.max(I32), sg.i32),
    ("min of f16", lambda: sg.min(F16), sg.f16),
    ("abs of i32", lambda: sg.abs(I32), sg.i32),
    ("maximum of i32", lambda: sg.maximum(I32, 0), sg.i32),
    ("minimum of two python numbers", lambda: sg.minimum(1, 2), sg.i64),
    ("maximum of int and float numbers", lambda: sg.maximum(1, 2.5), sg.f32),
    ("clip of i32", lambda: sg.clip(I32, 0, 5), sg.i32),
    ("where of f16", lambda: sg.where(COND, F16, F16), sg.f16),
    ("where of i32 and python int", lambda: sg.where(COND, I32, 0), sg.i32),
    ("where of two python numbers", lambda: sg.where(COND, 1, 2.0), sg.f32),
    ("argmax", lambda: sg.argmax(F32), sg.i64),
    ("argmin", lambda: sg.argmin(I32, axis=0), sg.i64),
    ("argsort", lambda: sg.argsort(I32), sg.i64),
    ("topk indices", lambda: sg.topk(F32, 2)[1], sg.i64),
    ("topk values keep the dtype", lambda: sg.topk(I32, 2)[0], sg.i32),
    ("sort", lambda: sg.sort(F16), sg.f16),
    ("floor of f16", lambda: sg.floor(F16), sg.f16),
    ("round of i32", lambda: sg.round(I32), sg.i32),
    ("relu of i64", lambda: sg.relu(I64), sg.i64),
    ("zeros", lambda: sg.zeros((2, 3)), sg.f32),
    ("ones i32", lambda: sg.ones(3, dtype=sg.i32), sg.i32),
    ("full default", lambda: sg.full((2,), 7), sg.f32),
    ("full i64", lambda: sg.full((2,), 7, dtype=sg.i64), sg.i64),
    ("eye", lambda: sg.eye(3), sg.f32),
    ("zeros_like", lambda: sg.zeros_like(I32), sg.i32),
    ("ones_like", lambda: sg.ones_like(F16), sg.f16),
    ("full_like", lambda: sg.full_like(I64, 3), sg.i64),
    ("arange of ints", lambda: sg.arange(5), sg.i64),
    ("arange of a float", lambda: sg.arange(0, 2, 0.5), sg.f32),
    ("arange with dtype", lambda: sg.arange(4, dtype=sg.i32), sg.i32),
    ("astype", lambda: sg.astype(F32, sg.f16), sg.f16),
    ("method astype", lambda: I32.astype(sg.bool), sg.bool),
    ("matmul of i32", lambda: I32 @ I32, sg.i32),
    ("softmax of f16", lambda: sg.softmax(F16), sg.f16),
    ("softmax of i32", lambda: sg.softmax(I32), sg.f32),
    ("one_hot", lambda: sg.one_hot(I32, 4), sg.f32),
    ("one_hot i32", lambda: sg.one_hot(I64, 4, dtype=sg.i32), sg.i32),
    ("stack of python numbers", lambda: sg.stack([1, 2]), sg.i64),
    ("stack of i32 and a python int", lambda: sg.stack([T(1, sg.i32), 2]), sg.i32),
    ("concatenate", lambda: sg.concatenate([F16, F16]), sg.f16),
    ("avg_pool2d of i32", lambda: sg.avg_pool2d(Tensor(np.ones((1, 2, 2, 1), np.int32)), 2), sg.f32),
    ("unary minus of i32", lambda: -I32, sg.i32),
    ("shape items are ints", lambda: Tensor(np.zeros((3, 4), np.float32)).shape[1] + I32, sg.i32),
]

MISMATCHES = [
    ("i32 + i64", lambda: I32 + I64),
    ("f32 * f16", lambda: F32 * F16),
    ("i32 < f32", lambda: I32 < F32),
    ("bool + i32", lambda: B + I32),
    ("maximum of f32 and f16", lambda: sg.maximum(F32, F16)),
    ("where of f32 and f16", lambda: sg.where(COND, F32, F16)),
    ("where with an int condition", lambda: sg.where(I32, F32, F32)),
    ("concatenate of i32 and i64", lambda: sg.concatenate([I32, I64])),
    ("stack of f32 and f16", lambda: sg.stack([F32, F16])),
    ("matmul of f32 and f16", lambda: F32 @ F16),
    ("clip of i32 with a float bound", lambda: sg.clip(I32, T(0.5, sg.f32), None)),
    ("take with float indices", lambda: sg.take(F32, F32)),
    ("item assignment of f32 into i32", lambda: I32.__setitem__(0, T(1.0, sg.f32))),
]

# Ops the compiler refuses bool operands for (kernels/ops/infer.cc): eager mode too.
BOOL_REFUSED = [
    ("bool + bool", lambda: B + B),
    ("bool * bool", lambda: B * B),
    ("abs of bool", lambda: sg.abs(B)),
    ("square of bool", lambda: sg.square(B)),
    ("floor of bool", lambda: sg.floor(B)),
    ("relu of bool", lambda: sg.relu(B)),
    ("clip of bool", lambda: sg.clip(B, B, B)),
    ("matmul of bool", lambda: sg.matmul(Tensor(np.ones((2, 2), np.bool_)), Tensor(np.ones((2, 2), np.bool_)))),
]


class DTypeRules(unittest.TestCase):
    def test_table(self):
        for name, thunk, expected in DTYPE_CASES:
            with self.subTest(name):
                result = thunk()
                self.assertIsInstance(result, Tensor)
                self.assertIs(result.dtype, expected)
                self.assertEqual(np.asarray(result).dtype, expected.np)

    def test_different_dtypes_are_an_error(self):
        for name, thunk in MISMATCHES:
            with self.subTest(name):
                with self.assertRaises(TypeError) as e:
                    thunk()
                self.assertTrue("astype" in str(e.exception) or "must be" in str(e.exception), str(e.exception))

    def test_bool_operands_refused_where_the_compiler_refuses_them(self):
        for name, thunk in BOOL_REFUSED:
            with self.subTest(name):
                with self.assertRaises(TypeError) as e:
                    thunk()
                self.assertIn("astype", str(e.exception))

    def test_python_int_out_of_range_for_i32(self):
        with self.assertRaises(OverflowError):
            I32 + 2**40

    def test_annotations(self):
        t = sg.f32["N", 784]
        self.assertIs(t.dtype, sg.f32)
        self.assertEqual(t.dims, ("N", 784))
        self.assertEqual(sg.f32[()].dims, ())
        self.assertEqual(sg.i64.dims, ())
        self.assertIs(sg.i64.dtype, sg.i64)
        self.assertEqual(sg.bool.name, "bool")
        self.assertEqual(sg.f16.np, np.float16)


class Arithmetic(unittest.TestCase):
    def test_floor_division_and_modulo_follow_python(self):
        a = [-7, 7, -7, 7, 0, -1, 5]
        b = [2, -2, -2, 2, 3, 4, -3]
        for d in (sg.i32, sg.i64):
            q = np.asarray(T(a, d) // T(b, d))
            r = np.asarray(T(a, d) % T(b, d))
            self.assertEqual(q.tolist(), [x // y for x, y in zip(a, b)])
            self.assertEqual(r.tolist(), [x % y for x, y in zip(a, b)])
        fa = [-7.5, 7.5, -7.5, 0.5]
        fb = [2.0, -2.0, -2.0, -0.25]
        q = np.asarray(T(fa, sg.f32) // T(fb, sg.f32))
        r = np.asarray(T(fa, sg.f32) % T(fb, sg.f32))
        self.assertEqual(q.tolist(), [x // y for x, y in zip(fa, fb)])
        self.assertEqual(r.tolist(), [x % y for x, y in zip(fa, fb)])

    def test_integer_division_by_zero_raises_naming_the_op(self):
        for d in (sg.i32, sg.i64):
            with self.assertRaisesRegex(ZeroDivisionError, "//"):
                T([1, 2], d) // T([1, 0], d)
            with self.assertRaisesRegex(ZeroDivisionError, "%"):
                T([1, 2], d) % 0
            with self.assertRaisesRegex(ZeroDivisionError, "//"):
                5 // T(0, d)

    def test_float_division_by_zero_gives_inf_and_nan(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = np.asarray(T([1.0, -1.0, 0.0], sg.f32) / 0.0)
            self.assertEqual(r[0], np.inf)
            self.assertEqual(r[1], -np.inf)
            self.assertTrue(np.isnan(r[2]))
            self.assertEqual(np.asarray(T([1, 0], sg.i32) / T([0, 0], sg.i32))[0], np.inf)

    def test_overflow_wraps_silently(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            self.assertEqual(int(T(2**31 - 1, sg.i32) + 1), -2**31)
            self.assertEqual(int(T(-2**63, sg.i64) - 1), 2**63 - 1)
            self.assertEqual(int(T(2**16, sg.i32) * T(2**16, sg.i32)), 0)
            self.assertEqual(int(sg.sum(T([2**62, 2**62], sg.i64))), -2**63)
            self.assertEqual(int(sg.abs(T(-2**31, sg.i32))), -2**31)
            self.assertEqual(int(-T(-2**31, sg.i32)), -2**31)
            self.assertEqual(int(T(3, sg.i32) ** 21), (3**21 + 2**31) % 2**32 - 2**31)
            self.assertEqual(int(T(3, sg.i32) ** 20), (3**20 + 2**31) % 2**32 - 2**31)

    def test_nan_propagates(self):
        x = T([1.0, np.nan, 3.0], sg.f32)
        self.assertTrue(math.isnan(float(sg.max(x))))
        self.assertTrue(math.isnan(float(sg.min(x))))
        self.assertTrue(math.isnan(float(sg.sum(x))))
        self.assertTrue(math.isnan(float(sg.mean(x))))
        self.assertTrue(np.isnan(np.asarray(sg.maximum(x, 2.0)))[1])
        self.assertTrue(np.isnan(np.asarray(sg.minimum(2.0, x)))[1])
        self.assertTrue(np.isnan(np.asarray(sg.clip(x, 0.0, 2.0)))[1])
        self.assertTrue(np.isnan(np.asarray(sg.relu(x)))[1])
        self.assertTrue(np.isnan(np.asarray(sg.softmax(x))).all())
        self.assertEqual(np.asarray(sg.isnan(x)).tolist(), [False, True, False])
        self.assertEqual(np.asarray(x == x).tolist(), [True, False, True])
        self.assertTrue(np.isnan(np.asarray(sg.sort(x))[-1]))

    def test_rounding_is_half_to_even(self):
        self.assertEqual(np.asarray(sg.round(T([0.5, 1.5, 2.5, -0.5, -1.5], sg.f32))).tolist(),
                         [0.0, 2.0, 2.0, -0.0, -2.0])

    def test_gelu_is_exact(self):
        xs = [-3.0, -1.0, 0.0, 0.5, 2.0]
        got = np.asarray(sg.gelu(T(xs, sg.f32)))
        want = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)

    def test_bool_arithmetic(self):
        with self.assertRaises(TypeError):
            -B
        with self.assertRaises(TypeError):
            B - B
        self.assertEqual(np.asarray(~B).tolist(), [False, True, False])


class Ordering(unittest.TestCase):
    def test_topk_largest_first_ties_by_lower_index(self):
        for d in (sg.f32, sg.f16, sg.i32, sg.i64):
            v, i = sg.topk(T([1, 3, 3, 2, 3, -5], d), 4)
            self.assertEqual(np.asarray(v).tolist(), [3, 3, 3, 2])
            self.assertEqual(np.asarray(i).tolist(), [1, 2, 4, 3])
        v, i = sg.topk(T([-2**31, 2**31 - 1, -2**31], sg.i32), 3)
        self.assertEqual(np.asarray(i).tolist(), [1, 0, 2])
        v, i = sg.topk(T([False, True, True], sg.bool), 2)
        self.assertEqual(np.asarray(i).tolist(), [1, 2])
        m = T([[1, 5], [5, 1], [5, 5]], sg.i32)
        v, i = sg.topk(m, 2, axis=0)
        self.assertEqual(np.asarray(i).tolist(), [[1, 0], [2, 2]])
        with self.assertRaises(ValueError):
            sg.topk(m, 4, axis=0)

    def test_argsort_is_stable(self):
        self.assertEqual(np.asarray(sg.argsort(T([2, 1, 2, 1, 0], sg.i32))).tolist(), [4, 1, 3, 0, 2])

    def test_argmax_reductions_and_keepdims(self):
        m = T([[1.0, 7.0, 7.0], [9.0, 0.0, 9.0]], sg.f32)
        self.assertEqual(int(sg.argmax(m)), 3)
        self.assertEqual(np.asarray(sg.argmax(m, axis=1)).tolist(), [1, 0])
        self.assertEqual(sg.argmin(m, axis=1, keepdims=True).shape, (2, 1))
        self.assertEqual(sg.sum(m, axis=(0, 1), keepdims=True).shape, (1, 1))
        self.assertEqual(float(sg.mean(m, axis=-1)[1]), 6.0)


def conv2d_loop(x, w, stride, padding, dilation, groups):
    """A direct seven-loop convolution with TensorFlow's SAME rule, in float64."""
    n, h, wd, cin = x.shape
    kh, kw, cin_g, cout = w.shape
    sh, sw = stride
    dh, dw = dilation

    def out_and_pad(size, k, s, d):
        if padding == "VALID":
            return (size - ((k - 1) * d + 1)) // s + 1, 0
        out = math.ceil(size / s)
        return out, max((out - 1) * s + (k - 1) * d + 1 - size, 0) // 2

    oh, top = out_and_pad(h, kh, sh, dh)
    ow, left = out_and_pad(wd, kw, sw, dw)
    cout_g = cout // groups
    y = np.zeros((n, oh, ow, cout))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for o in range(cout):
                    g = o // cout_g
                    acc = 0.0
                    for p in range(kh):
                        for q in range(kw):
                            r, c = i * sh + p * dh - top, j * sw + q * dw - left
                            if 0 <= r < h and 0 <= c < wd:
                                for ci in range(cin_g):
                                    acc += float(x[b, r, c, g * cin_g + ci]) * float(w[p, q, ci, o])
                    y[b, i, j, o] = acc
    return y


class NeuralNetworkOps(unittest.TestCase):
    def test_conv2d_against_a_direct_loop(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((2, 7, 6, 4)).astype(np.float32)
        for stride, padding, dilation, groups in [(1, "SAME", 1, 1), (2, "SAME", 1, 2), ((2, 1), "SAME", (1, 2), 1),
                                                  (1, "VALID", 1, 1), (2, "VALID", (2, 1), 4)]:
            with self.subTest(stride=stride, padding=padding, dilation=dilation, groups=groups):
                w = rng.standard_normal((3, 2, 4 // groups, 4)).astype(np.float32)
                got = np.asarray(sg.conv2d(Tensor(x), Tensor(w), stride, padding, dilation, groups))
                pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
                want = conv2d_loop(x, w, pair(stride), padding, pair(dilation), groups)
                self.assertEqual(got.shape, want.shape)
                self.assertEqual(got.dtype, np.float32)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_conv2d_same_output_size_and_odd_padding_at_the_end(self):
        # in 4, k 2, stride 1: one cell of padding in total, at the bottom/right.
        x = Tensor(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))
        w = Tensor(np.ones((2, 2, 1, 1), np.float32))
        y = np.asarray(sg.conv2d(x, w, padding="SAME"))[0, :, :, 0]
        self.assertEqual(y.shape, (4, 4))
        self.assertEqual(y[0, 0], 0 + 1 + 4 + 5)
        self.assertEqual(y[3, 3], 15)

    def test_conv2d_rejects_bad_operands(self):
        x = Tensor(np.zeros((1, 4, 4, 3), np.float32))
        with self.assertRaises(ValueError):
            sg.conv2d(x, Tensor(np.zeros((3, 3, 2, 4), np.float32)))
        with self.assertRaises(ValueError):
            sg.conv2d(x, Tensor(np.zeros((3, 3, 3, 4), np.float32)), padding="FULL")
        with self.assertRaises(ValueError):
            sg.conv2d(x, Tensor(np.zeros((5, 5, 3, 4), np.float32)))

    def test_avg_pool_does_not_count_padding(self):
        x = Tensor(np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1))
        y = np.asarray(sg.avg_pool2d(x, 2, padding="SAME"))[0, :, :, 0]
        self.assertEqual(y.tolist(), [[(1 + 2 + 4 + 5) / 4, (3 + 6) / 2], [(7 + 8) / 2, 9.0]])
        ones = np.asarray(sg.avg_pool2d(Tensor(np.ones((2, 5, 5, 3), np.float32)), 3, 1, "SAME"))
        self.assertTrue((ones == 1).all())
        m = np.asarray(sg.max_pool2d(Tensor(-np.ones((1, 3, 3, 1), np.float32)), 2, padding="SAME"))
        self.assertTrue((m == -1).all())
        self.assertEqual(sg.max_pool2d(Tensor(np.zeros((1, 5, 5, 2), np.float32)), 2).shape, (1, 2, 2, 2))

    def test_softmax_and_log_softmax(self):
        x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]], np.float32)
        s = np.asarray(sg.softmax(Tensor(x)))
        e = np.exp(x[0] - x[0].max())
        np.testing.assert_allclose(s[0], e / e.sum(), rtol=1e-6)
        np.testing.assert_allclose(s[1], [0.5, 0.5, 0.0], atol=1e-7)
        np.testing.assert_allclose(s.sum(axis=-1), 1.0, rtol=1e-6)
        ls = np.asarray(sg.log_softmax(Tensor(x)))
        np.testing.assert_allclose(ls[0], np.log(e / e.sum()), rtol=1e-6)
        self.assertTrue(np.isfinite(ls[1, :2]).all())
        np.testing.assert_allclose(np.asarray(sg.softmax(Tensor(x), axis=0))[:, 0].sum(), 1.0, rtol=1e-6)

    def test_layer_norm(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((3, 8)).astype(np.float32)
        g = rng.standard_normal(8).astype(np.float32)
        b = rng.standard_normal(8).astype(np.float32)
        got = np.asarray(sg.layer_norm(Tensor(x), Tensor(g), Tensor(b), eps=1e-3))
        mu = x.astype(np.float64).mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        np.testing.assert_allclose(got, (x - mu) / np.sqrt(var + 1e-3) * g + b, rtol=1e-5, atol=1e-6)
        self.assertEqual(got.dtype, np.float32)
        with self.assertRaises(TypeError):
            sg.layer_norm(Tensor(x), Tensor(g.astype(np.float16)), Tensor(b))

    def test_one_hot_out_of_range_rows_are_zero(self):
        y = np.asarray(sg.one_hot(T([0, 2, 3, -1, 1], sg.i32), 3))
        self.assertEqual(y.tolist(), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0]])
        self.assertEqual(sg.one_hot(T([[1, 2]], sg.i64), 4).shape, (1, 2, 4))


class AgreesWithNumPy(unittest.TestCase):
    """Where §3 and NumPy agree, the eager results are NumPy's."""

    def setUp(self):
        rng = np.random.default_rng(3)
        self.a = rng.standard_normal((3, 4)).astype(np.float32)
        self.b = rng.standard_normal((4, 5)).astype(np.float32)
        self.i = rng.integers(-50, 50, (3, 4)).astype(np.int32)

    def check(self, got, want, exact=False):
        got = np.asarray(got)
        self.assertEqual(got.shape, np.shape(want))
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    def test_ops(self):
        a, b, i = self.a, self.b, self.i
        A, Bt, I = Tensor(a), Tensor(b), Tensor(i)
        self.check(A @ Bt, a @ b)
        self.check(sg.matmul(Tensor(np.stack([a, a])), Bt), np.matmul(np.stack([a, a]), b))
        self.check(sg.dot(A, Bt), np.dot(a, b))
        self.check(A.T, a.T, exact=True)
        self.check(sg.transpose(A, (1, 0)), a.T, exact=True)
        self.check(sg.reshape(A, (2, -1)), a.reshape(2, -1), exact=True)
        self.check(A.reshape(4, 3), a.reshape(4, 3), exact=True)
        self.check(sg.expand_dims(A, 1), a[:, None], exact=True)
        self.check(sg.squeeze(sg.expand_dims(A, 0), 0), a, exact=True)
        self.check(sg.concatenate([A, A], axis=1), np.concatenate([a, a], 1), exact=True)
        self.check(sg.stack([A, A], axis=-1), np.stack([a, a], -1), exact=True)
        self.check(sg.split(A, 2, axis=1)[1], np.split(a, 2, 1)[1], exact=True)
        self.check(sg.broadcast_to(A[0], (2, 4)), np.broadcast_to(a[0], (2, 4)), exact=True)
        self.check(sg.tile(A, (2, 1)), np.tile(a, (2, 1)), exact=True)
        self.check(sg.pad(A, ((1, 0), (0, 2))), np.pad(a, ((1, 0), (0, 2))), exact=True)
        self.check(sg.take(A, T([2, 0, -1], sg.i32), axis=0), np.take(a, [2, 0, -1], 0), exact=True)
        self.check(sg.take(A, T([[1], [3]], sg.i64), axis=1), np.take(a, [[1], [3]], 1), exact=True)
        self.check(A[1:, ::2], a[1:, ::2], exact=True)
        self.check(A[..., None], a[..., None], exact=True)
        self.check(A[T(1, sg.i64), -1], a[1, -1], exact=True)
        self.check(sg.cumsum(A, axis=1), np.cumsum(a, 1))
        self.check(sg.sort(A, axis=0), np.sort(a, 0), exact=True)
        self.check(sg.sum(I, axis=1), i.sum(1), exact=True)
        self.check(sg.prod(I[:, :2], axis=0), i[:, :2].prod(0), exact=True)
        self.check(sg.max(I, axis=0, keepdims=True), i.max(0, keepdims=True), exact=True)
        self.check(sg.where(A > 0, A, 0.0), np.where(a > 0, a, np.float32(0)), exact=True)
        self.check(sg.clip(I, -5, 5), np.clip(i, -5, 5), exact=True)
        self.check(I // 7, i // 7, exact=True)
        self.check(I % 7, i % 7, exact=True)
        self.check(I * I - 3, i * i - 3, exact=True)
        self.check(sg.tanh(A), np.tanh(a))
        self.check(sg.exp(A), np.exp(a))
        self.check(sg.sigmoid(A), 1 / (1 + np.exp(-a)))
        self.check(sg.rsqrt(sg.abs(A)), 1 / np.sqrt(np.abs(a)))
        self.check(sg.sign(I), np.sign(i), exact=True)
        self.check(sg.square(A), np.square(a))
        self.check(sg.eye(3, 4, 1), np.eye(3, 4, 1, dtype=np.float32), exact=True)
        self.check(sg.arange(1, 10, 3), np.arange(1, 10, 3), exact=True)
        self.check(sg.full((2, 2), 3.5), np.full((2, 2), 3.5, np.float32), exact=True)
        self.check(sg.any(A > 2), np.any(a > 2), exact=True)

    def test_array_methods_are_numpys(self):
        a, b, i = self.a, self.b, self.i
        A, Bt, I = Tensor(a), Tensor(b), Tensor(i)
        self.check(I.sum(axis=0), i.sum(axis=0), exact=True)
        self.check(A.mean(), a.mean())
        self.check(A.max(axis=1, keepdims=True), a.max(axis=1, keepdims=True), exact=True)
        self.check(I.min(), i.min(), exact=True)
        self.check(I[:, :2].prod(axis=1), i[:, :2].prod(axis=1), exact=True)
        self.check((A > 0).any(axis=0), (a > 0).any(axis=0), exact=True)
        self.check((A > -9).all(), (a > -9).all(), exact=True)
        self.check(A.argmax(axis=1), a.argmax(axis=1), exact=True)
        self.check(A.argmin(), a.argmin(), exact=True)
        self.check(A.cumsum(1), a.cumsum(1))
        self.check(I.clip(-5, 5), i.clip(-5, 5), exact=True)
        self.check((A * 3).round(), np.round(a * 3), exact=True)
        self.check(A.dot(Bt), a.dot(b))
        self.check(A.transpose(1, 0), a.transpose(1, 0), exact=True)
        self.check(A.transpose((1, 0)), a.T, exact=True)
        self.check(A.transpose(), a.T, exact=True)
        self.check(A.flatten(), a.flatten(), exact=True)
        self.check(A[:, None].squeeze(1), a, exact=True)
        self.assertEqual(A.size, a.size)
        stack = np.stack([b, b * 2, b - 1])
        self.check(sg.dot(A, Tensor(stack)), np.dot(a, stack))
        with self.assertRaises(AttributeError):
            A.softmax()  # no such method in NumPy; graph-compile refuses it too


class FunctionBoundary(unittest.TestCase):
    def test_results_are_plain_numpy(self):
        @sg.function
        def f(x: sg.f32["N", 3], k: sg.i32[()]):
            return x * 2, {"n": len(x), "half": 0.5, "flag": True, "k": k + 1}

        self.assertTrue(f.__sg_entry__)
        y, d = f(np.ones((2, 3), np.float32), np.array(4, np.int32))
        self.assertIs(type(y), np.ndarray)
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual((d["n"].dtype, d["n"].shape, int(d["n"])), (np.int64, (), 2))
        self.assertEqual(d["half"].dtype, np.float32)
        self.assertEqual(d["flag"].dtype, np.bool_)
        self.assertEqual((d["k"].dtype, int(d["k"])), (np.int32, 5))

    def test_inputs_are_checked_never_converted(self):
        @sg.function
        def f(x: sg.f32["N", 3], y: sg.f32["N"]):
            return x

        with self.assertRaisesRegex(TypeError, "input 'x'.*float64"):
            f(np.ones((2, 3)), np.ones(2, np.float32))
        with self.assertRaisesRegex(ValueError, "input 'x'"):
            f(np.ones((2, 4), np.float32), np.ones(2, np.float32))
        with self.assertRaisesRegex(ValueError, "dim N"):
            f(np.ones((2, 3), np.float32), np.ones(5, np.float32))

    def test_item_assignment_has_value_semantics(self):
        @sg.function
        def f(x: sg.i32[3]):
            row = x[1:]
            x[1] = 10
            return x, row

        a = np.array([1, 2, 3], np.int32)
        x, row = f(a)
        self.assertEqual(x.tolist(), [1, 10, 3])
        self.assertEqual(row.tolist(), [2, 3])
        self.assertEqual(a.tolist(), [1, 2, 3])

    def test_nested_entries_and_python_protocols(self):
        @sg.function
        def inner(v: sg.f32[3]):
            return v + 1.0

        @sg.function
        def outer(m: sg.f32[2, 3]):
            acc = sg.zeros(3)
            for row in m:
                acc = acc + inner(row)
            total = sg.zeros((), dtype=sg.i64)
            for i in sg.range(len(m)):
                total = total + i
            if sg.sum(acc) > 0:
                return acc, total
            return -acc, total

        acc, total = outer(np.ones((2, 3), np.float32))
        self.assertEqual(acc.tolist(), [4.0, 4.0, 4.0])
        self.assertEqual((total.dtype, int(total)), (np.int64, 1))
        with self.assertRaisesRegex(ValueError, "sg.any"):
            bool(Tensor(np.ones(2, np.float32)))
        self.assertEqual(float(Tensor(np.array(2.5, np.float32))), 2.5)
        self.assertEqual(list(range(5))[T(3, sg.i64)], 3)

    def test_weights_from_safetensors(self):
        import json
        w = np.arange(6, dtype=np.float32).reshape(2, 3)
        header = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                             "__metadata__": {}}).encode()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.safetensors")
            with open(path, "wb") as f:
                f.write(len(header).to_bytes(8, "little") + header + w.tobytes())
            sg.load_weights(path)
            self.assertEqual(np.asarray(sg.weight("w")).tolist(), w.tolist())
            with self.assertRaisesRegex(KeyError, "no such tensor"):
                sg.weight("missing")


if __name__ == "__main__":
    print(f"numpy {np.__version__}", file=sys.stderr)
    unittest.main()
