"""Eager-mode differentiation (SPEC §11): sg.grad, sg.value_and_grad, sg.vjp,
sg.stop_gradient, sg.checkpoint, the VJP rule of every differentiable op against
central finite differences, structured arguments, control flow, the losses of
sg.nn and sg.logsumexp.

Run by ctest with /usr/bin/python3 (NumPy 1.24); it must pass unchanged on NumPy 2.x.
"""
import collections
import dataclasses
import math
import os
import sys
import typing
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compiler", "python"))
import stagegraph as sg  # noqa: E402
from stagegraph import Tensor, nn  # noqa: E402

RNG = np.random.default_rng(1234)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def away(*shape, gap=0.2, hi=1.0):
    """Values with |x| >= gap: no kink of relu, abs, sign within a finite-difference step."""
    return (RNG.choice([-1.0, 1.0], shape) * RNG.uniform(gap, hi, shape)).astype(np.float32)


def spaced(*shape, step=0.05):
    """Distinct values at least `step` apart (no ties for max, sort, pools)."""
    n = int(np.prod(shape))
    return ((RNG.permutation(n) - n / 2) * step).reshape(shape).astype(np.float32)


def positive(*shape):
    return RNG.uniform(0.5, 2.0, shape).astype(np.float32)


def np_of(v):
    return np.asarray(v._a if isinstance(v, Tensor) else v, dtype=np.float64)


def numeric_vjp(fn, arrays, ct, eps):
    """Central differences of sum(fn(*arrays) * ct) in float64 around f32 inputs."""
    def loss(xs):
        return float(np.sum(np_of(fn(*[Tensor(x) for x in xs])) * ct))
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros(a.shape, np.float64)
        for idx in np.ndindex(*a.shape):
            plus, minus = [x.copy() for x in arrays], [x.copy() for x in arrays]
            plus[k][idx] = a[idx] + np.float32(eps)
            minus[k][idx] = a[idx] - np.float32(eps)
            step = float(plus[k][idx]) - float(minus[k][idx])
            g[idx] = (loss(plus) - loss(minus)) / step
        grads.append(g)
    return grads


def assert_grads_close(test, name, got, want, rtol=2e-2, atol=2e-3):
    for k, (g, w) in enumerate(zip(got, want)):
        g = np_of(g)
        test.assertEqual(g.shape, w.shape, f"{name}: gradient {k} has shape {g.shape}, expected {w.shape}")
        scale = max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
        err = np.abs(g - w)
        bad = err > atol * scale + rtol * np.abs(w)
        if np.any(bad):
            i = tuple(int(v) for v in np.argwhere(bad)[0])
            test.fail(f"{name}: gradient {k} differs from finite differences at {i}: {g[i]!r} vs {w[i]!r}\n"
                      f"got:\n{g}\nexpected:\n{w}")


# (name, fn of tensors -> one tensor, inputs (f32 arrays), finite-difference step)
def _cases():
    idx = Tensor(np.array(2, np.int64))
    rep = Tensor(np.array([[0, 2], [2, 2], [1, 0]], np.int64))
    cond = Tensor(RNG.random((3, 4)) > 0.5)
    c = [
        ("add broadcast", lambda a, b: a + b, [rand(3, 4), rand(4)]),
        ("sub broadcast", lambda a, b: a - b, [rand(2, 3, 1), rand(3, 4)]),
        ("mul broadcast, python scalar", lambda a, b: 2.0 * a * b, [rand(3, 4), rand(3, 1)]),
        ("div broadcast", lambda a, b: a / b, [rand(3, 4), away(4, gap=0.8, hi=1.6)]),
        ("rdiv python scalar", lambda a: 1.5 / a, [away(5, gap=0.8, hi=1.6)]),
        ("pow python int", lambda a: a ** 2, [rand(5)]),
        ("pow python float", lambda a: a ** 1.5, [positive(5)]),
        ("pow tensor exponent", lambda a, b: a ** b, [positive(2, 3), rand(3)]),
        ("rpow python base", lambda a: 2.0 ** a, [rand(4)]),
        ("mod", lambda a, b: a % b, [np.array([2.3, -3.4, 5.7, 0.5], np.float32),
                                     np.array([1.0, 1.5, -2.0, 0.7], np.float32)]),
        ("floordiv (zero)", lambda a, b: a // b, [np.array([2.3, -3.4, 5.7], np.float32),
                                                  np.array([1.0, 1.5, -2.0], np.float32)]),
        ("unary minus", lambda a: -a, [rand(3)]),
        ("builtin abs", lambda a: abs(a), [away(4)]),
        ("matmul 2d", lambda a, b: a @ b, [rand(3, 4), rand(4, 2)]),
        ("matmul batch broadcast", lambda a, b: sg.matmul(a, b), [rand(2, 1, 3, 4), rand(5, 4, 2)]),
        ("matmul 1d @ 3d", lambda a, b: a @ b, [rand(4), rand(2, 4, 3)]),
        ("matmul 3d @ 1d", lambda a, b: a @ b, [rand(2, 3, 4), rand(4)]),
        ("matmul 1d @ 1d", lambda a, b: a @ b, [rand(4), rand(4)]),
        ("dot 2d", lambda a, b: sg.dot(a, b), [rand(3, 4), rand(4, 2)]),
        ("dot 3d . 3d", lambda a, b: sg.dot(a, b), [rand(2, 3, 4), rand(3, 4, 2)]),
        ("dot 1d . 3d", lambda a, b: sg.dot(a, b), [rand(4), rand(2, 4, 3)]),
        ("dot scalar", lambda a, b: sg.dot(a, b), [rand(), rand(2, 3)]),
        ("x.dot", lambda a, b: a.dot(b), [rand(3), rand(3, 2)]),
        ("abs", sg.abs, [away(6)]),
        ("exp", sg.exp, [rand(6)]),
        ("log", sg.log, [positive(6)]),
        ("sqrt", sg.sqrt, [positive(6)]),
        ("rsqrt", sg.rsqrt, [positive(6)]),
        ("sin", sg.sin, [rand(6)]),
        ("cos", sg.cos, [rand(6)]),
        ("tanh", sg.tanh, [rand(6)]),
        ("sigmoid", sg.sigmoid, [rand(6, lo=-4, hi=4)]),
        ("relu", sg.relu, [away(6)]),
        ("gelu", sg.gelu, [rand(6, lo=-3, hi=3)]),
        ("square", sg.square, [rand(6)]),
        ("floor ceil round sign (zero)", lambda a: sg.floor(a) + sg.ceil(a) + sg.round(a) + sg.sign(a),
         [np.array([0.3, -1.3, 2.2, -0.6], np.float32)]),
        ("maximum", sg.maximum, [spaced(3, 4), spaced(4, step=0.07)]),
        ("minimum", sg.minimum, [spaced(3, 4), spaced(3, 1, step=0.11)]),
        ("maximum python scalar", lambda a: sg.maximum(a, 0.05), [away(6, gap=0.1)]),
        ("where broadcast", lambda a, b: sg.where(cond, a, b), [rand(3, 4), rand(4)]),
        ("where python scalar", lambda a: sg.where(cond, a, 0.0), [rand(3, 4)]),
        ("clip scalars", lambda x: sg.clip(x, -0.5, 0.5), [np.array([-0.9, -0.3, 0.1, 0.4, 0.8], np.float32)]),
        ("clip tensors", lambda x, lo, hi: sg.clip(x, lo, hi),
         [np.array([-0.9, -0.3, 0.1, 0.4, 0.8], np.float32), np.array(-0.5, np.float32),
          np.array([0.6, 0.6, 0.6, 0.2, 0.2], np.float32)]),
        ("x.clip(None, hi)", lambda x: x.clip(None, 0.2), [np.array([-0.9, 0.1, 0.4], np.float32)]),
        ("sum", lambda a: sg.sum(a), [rand(3, 4)]),
        ("sum axis", lambda a: sg.sum(a, axis=1), [rand(3, 4, 2)]),
        ("sum axes keepdims", lambda a: sg.sum(a, axis=(0, 2), keepdims=True), [rand(3, 4, 2)]),
        ("x.sum negative axis", lambda a: a.sum(-1), [rand(3, 4)]),
        ("mean", lambda a: sg.mean(a, axis=0), [rand(3, 4)]),
        ("x.mean keepdims", lambda a: a.mean(axis=(0, 1), keepdims=True), [rand(2, 3, 2)]),
        ("max", lambda a: sg.max(a, axis=1), [spaced(3, 4)]),
        ("max all keepdims", lambda a: sg.max(a, keepdims=True), [spaced(3, 4)]),
        ("min", lambda a: sg.min(a, axis=0), [spaced(3, 4)]),
        ("x.max", lambda a: a.max(), [spaced(5)]),
        ("prod", lambda a: sg.prod(a, axis=1), [rand(3, 4, lo=0.5, hi=1.5)]),
        ("prod with zeros", lambda a: sg.prod(a, axis=1),
         [np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 2.0], [1.5, -2.0, 0.5]], np.float32)]),
        ("prod all", lambda a: a.prod(), [rand(5, lo=0.5, hi=1.5)]),
        ("cumsum axis", lambda a: sg.cumsum(a, 1), [rand(3, 4)]),
        ("cumsum flat", lambda a: sg.cumsum(a), [rand(3, 4)]),
        ("cumprod axis", lambda a: sg.cumprod(a, 1), [rand(3, 4, lo=0.5, hi=1.5)]),
        ("cumprod with zeros", lambda a: sg.cumprod(a, axis=1),
         [np.array([[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [1.5, -2.0, 0.5, 0.0]], np.float32)]),
        ("cumprod flat", lambda a: sg.cumprod(a), [rand(2, 3, lo=0.5, hi=1.5)]),
        ("flip", lambda a: sg.flip(a, (0, 1)), [rand(3, 4)]),
        ("roll", lambda a: sg.roll(a, (1, 3), (0, 1)), [rand(3, 4)]),
        ("roll flat", lambda a: sg.roll(a, -2), [rand(3, 4)]),
        ("diff", lambda a: sg.diff(a, n=2, axis=0), [rand(4, 3)]),
        ("logaddexp", lambda a, b: sg.logaddexp(a, b), [rand(3, 4), rand(4)]),
        ("outer", lambda a, b: sg.outer(a, b), [rand(3), rand(2, 2)]),
        ("meshgrid", lambda a, b: sg.meshgrid(a, b)[0] * sg.meshgrid(a, b)[1], [rand(3), rand(4)]),
        ("einsum matmul", lambda a, b: sg.einsum("ij,jk", a, b), [rand(2, 3), rand(3, 4)]),
        ("einsum trace", lambda a: sg.einsum("ii", a), [rand(3, 3)]),
        ("einsum batch three operands", lambda a, b: sg.einsum("bij,jk,bk->bi", a, b, a[:, 0]),
         [rand(2, 3, 3), rand(3, 3)]),
        ("sort", lambda a: sg.sort(a), [spaced(3, 5)]),
        ("sort axis 0", lambda a: sg.sort(a, axis=0), [spaced(4, 3)]),
        ("topk values", lambda a: sg.topk(a, 2)[0], [spaced(3, 5)]),
        ("topk axis 0", lambda a: sg.topk(a, 3, axis=0)[0], [spaced(4, 2)]),
        ("logsumexp", lambda a: sg.logsumexp(a, axis=1), [rand(3, 4, lo=-3, hi=3)]),
        ("logsumexp all keepdims", lambda a: sg.logsumexp(a, keepdims=True), [rand(3, 4)]),
        ("reshape", lambda a: sg.reshape(a, (4, -1)), [rand(2, 3, 2)]),
        ("x.reshape", lambda a: a.reshape(6, 2), [rand(3, 4)]),
        ("flatten", lambda a: a.flatten(), [rand(3, 4)]),
        ("transpose axes", lambda a: sg.transpose(a, (2, 0, 1)), [rand(2, 3, 4)]),
        ("transpose negative axes", lambda a: sg.transpose(a, (-1, 0, 1)), [rand(2, 3, 4)]),
        ("x.T", lambda a: a.T, [rand(3, 4)]),
        ("expand_dims", lambda a: sg.expand_dims(a, 1), [rand(3, 4)]),
        ("squeeze", lambda a: sg.squeeze(a, 1), [rand(3, 1, 4)]),
        ("concatenate", lambda a, b: sg.concatenate([a, b, a], axis=1), [rand(2, 3), rand(2, 1)]),
        ("concatenate with numbers", lambda a: sg.concatenate([a, [1.0, 2.0]]), [rand(3)]),
        ("concatenate flat", lambda a, b: sg.concatenate([a, b], axis=None), [rand(2, 3), rand(4)]),
        ("stack", lambda a, b: sg.stack([a, b, a * 2.0], axis=1), [rand(2, 3), rand(2, 3)]),
        ("stack of nested lists", lambda a: sg.stack([[a[0], a[1]], [a[1], a[1] * a[0]]]), [rand(2, 3)]),
        ("concatenate a list of tensors", lambda a: sg.concatenate([[a[0], 2.0], a]), [rand(3)]),
        ("a list as an operand", lambda a: sg.exp([a[0], a[1] * 2.0]) * sg.stack([a[1], a[0]]), [rand(2, 2)]),
        ("split", lambda a: (lambda p: p[0] * 2.0 + p[2])(sg.split(a, 3, axis=1)), [rand(2, 6)]),
        ("split at indices", lambda a: sg.split(a, [1, 3])[1], [rand(5, 2)]),
        ("broadcast_to", lambda a: sg.broadcast_to(a, (2, 3, 4)), [rand(3, 1)]),
        ("tile", lambda a: sg.tile(a, (2, 1, 3)), [rand(2, 3)]),
        ("tile int", lambda a: sg.tile(a, 2), [rand(2, 3)]),
        ("pad", lambda a: sg.pad(a, ((1, 2), (0, 1))), [rand(2, 3)]),
        ("pad with a traced value", lambda a, v: sg.pad(a, 1, constant_values=v), [rand(2, 3), rand()]),
        ("x[i]", lambda a: a[1], [rand(3, 4)]),
        ("x[a:b]", lambda a: a[1:3], [rand(4, 2)]),
        ("x[:, 1]", lambda a: a[:, 1], [rand(3, 4)]),
        ("x[..., None]", lambda a: a[..., None], [rand(3, 4)]),
        ("x[::-1, ::2]", lambda a: a[::-1, ::2], [rand(3, 5)]),
        ("x[staged index]", lambda a: a[idx] * a[-1], [rand(4, 2)]),
        ("iteration", lambda a: sg.stack([row * float(i + 1) for i, row in enumerate(a)]), [rand(3, 2)]),
        ("take repeated indices", lambda a: sg.take(a, rep, axis=0), [rand(3, 2)]),
        ("take axis 1", lambda a: sg.take(a, Tensor(np.array([2, 0, 2], np.int32)), axis=1), [rand(2, 3)]),
        ("take flat", lambda a: sg.take(a, rep, axis=None), [rand(2, 2)]),
        ("astype to int (no gradient)", lambda a: a.astype(sg.i32).astype(sg.f32) + a,
         [np.array([0.5, 1.5, -2.5], np.float32)]),
        ("softmax", lambda a: sg.softmax(a), [rand(3, 4, lo=-2, hi=2)]),
        ("softmax axis 0", lambda a: sg.softmax(a, axis=0), [rand(3, 4)]),
        ("log_softmax", lambda a: sg.log_softmax(a), [rand(3, 4, lo=-2, hi=2)]),
        ("layer_norm", lambda x, g, b: sg.layer_norm(x, g, b), [rand(3, 5, lo=-2, hi=2), rand(5), rand(5)]),
        ("layer_norm eps", lambda x, g: sg.layer_norm(x, g, 0.0, eps=0.1), [rand(2, 4), rand(4)]),
        ("conv2d valid", lambda x, w: sg.conv2d(x, w), [rand(2, 5, 5, 3), rand(3, 3, 3, 4)]),
        ("conv2d same stride 2", lambda x, w: sg.conv2d(x, w, stride=2, padding="SAME"),
         [rand(1, 6, 5, 2), rand(3, 3, 2, 3)]),
        ("conv2d stride (2, 1) same, even kernel", lambda x, w: sg.conv2d(x, w, stride=(2, 1), padding="SAME"),
         [rand(1, 5, 4, 2), rand(2, 2, 2, 2)]),
        ("conv2d dilation", lambda x, w: sg.conv2d(x, w, dilation=2, padding="SAME"),
         [rand(1, 5, 5, 2), rand(2, 3, 2, 2)]),
        ("conv2d groups", lambda x, w: sg.conv2d(x, w, groups=2), [rand(1, 4, 4, 4), rand(2, 2, 2, 6)]),
        ("max_pool2d valid", lambda x: sg.max_pool2d(x, 2), [spaced(2, 4, 4, 2)]),
        ("max_pool2d same stride", lambda x: sg.max_pool2d(x, 3, stride=2, padding="SAME"), [spaced(1, 5, 4, 2)]),
        ("avg_pool2d valid", lambda x: sg.avg_pool2d(x, 2), [rand(2, 4, 4, 2)]),
        ("avg_pool2d same", lambda x: sg.avg_pool2d(x, 3, stride=2, padding="SAME"), [rand(1, 5, 4, 2)]),
        ("item assignment", lambda x, v: _assign(x, v), [rand(4, 3), rand(3)]),
        ("x[index tensor] repeated, negative", lambda a: a[Tensor(np.array([[2, -3], [0, 2]], np.int64))],
         [rand(3, 2)]),
        ("x[:, index list]", lambda a: a[:, [1, 1, -1]] * a[1, [0, 2, 2]], [rand(3, 3)]),
        ("x[mask]", lambda a: a[a > 0] * 2.0 + sg.sum(a[a[:, 0] > 0], axis=0)[0], [away(4, 3)]),
        ("sg.compress", lambda a: sg.compress(Tensor(np.array([True, False, True])), a, axis=1), [rand(2, 3)]),
        ("x[idx] = v", lambda x, v: _assign_indexed(x, v), [rand(4, 3), rand(2, 3)]),
        ("x[mask] = v", lambda x, v: _assign_masked(x, v), [away(4, 3), rand(3)]),
        ("nn.cross_entropy", lambda x: nn.cross_entropy(x, Tensor(np.array([2, 0, 1], np.int64))),
         [rand(3, 4, lo=-3, hi=3)]),
        ("nn.cross_entropy soft labels", lambda x, y: nn.cross_entropy(x, y),
         [rand(3, 4, lo=-3, hi=3), RNG.dirichlet(np.ones(4), 3).astype(np.float32)]),
        ("nn.binary_cross_entropy_with_logits",
         lambda x, t: nn.binary_cross_entropy_with_logits(x, t), [rand(3, 2, lo=-4, hi=4), rand(3, 2, lo=0, hi=1)]),
        ("nn.binary_cross_entropy_with_logits at 0", lambda x: nn.binary_cross_entropy_with_logits(x, 0.3),
         [np.zeros(3, np.float32)]),
        ("nn.mse", nn.mse, [rand(3, 2), rand(3, 2)]),
        ("nn.mse broadcast target", nn.mse, [rand(3, 2), rand(2)]),
        ("nn.l1", nn.l1, [rand(4), rand(4) + away(4, gap=0.3)]),
        ("nn.softmax", lambda a: nn.softmax(a), [rand(2, 3)]),
    ]
    return c


def _assign(x, v):
    y = x * 1.0
    y[1] = v * 2.0
    y[2:, 0] = sg.sum(v)
    return y * x


def _assign_indexed(x, v):
    y = x * 1.0
    y[Tensor(np.array([2, -4], np.int64))] = v * 3.0   # rows 2 and 0 overwritten
    y[:, [1]] = 0.5
    return y * x


def _assign_masked(x, v):
    y = x * 1.0
    y[x > 0] = 0.0                   # a scalar into the selected elements
    z = x * 1.0
    z[x[:, 0] > 0] = v * v           # a row broadcast into the selected rows
    w = x * 1.0
    w[x < 0] = w[x < 0] * 3.0        # one value per selected element
    return y * x + z + w


class Rules(unittest.TestCase):
    def test_every_op_against_finite_differences(self):
        failures = []
        for name, fn, arrays in _cases():
            with self.subTest(op=name):
                out = fn(*[Tensor(a) for a in arrays])
                shape = np.shape(np_of(out))
                ct = RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.5, 1.5, shape)  # no tiny cotangents
                primal, pullback = sg.vjp(fn, *[Tensor(a) for a in arrays])
                self.assertTrue(np.array_equal(np_of(primal), np_of(out)), name)
                got = pullback(Tensor(ct.astype(np.float32)))
                self.assertEqual(len(got), len(arrays))
                for g, a in zip(got, arrays):
                    self.assertIsInstance(g, Tensor, name)
                    self.assertEqual((g.dtype, g.shape), (sg.f32, a.shape), name)
                want = numeric_vjp(fn, arrays, ct, 1e-3)
                try:
                    assert_grads_close(self, name, got, want)
                except AssertionError as e:
                    failures.append(str(e))
        self.assertFalse(failures, "\n\n".join(failures))

    def test_zero_gradients(self):
        x = np.array([0.3, -1.3, 2.2], np.float32)
        for f in (sg.floor, sg.ceil, sg.round, sg.sign, lambda v: v // 2.0):
            self.assertEqual(sg.grad(lambda v: sg.sum(f(v)))(x).numpy().tolist(), [0.0, 0.0, 0.0])
        g = sg.grad(lambda v: sg.sum(sg.one_hot(sg.argmax(v), 3) * v) + sg.sum((v > 0).astype(sg.f32)))(x)
        self.assertEqual(g.numpy().tolist(), [0.0, 0.0, 1.0])  # only through the product's v

    def test_casts(self):
        # float -> float: the gradient is cast back (f16 rounding has no finite difference to compare with)
        x, c = rand(4), rand(4)
        g = sg.grad(lambda v: sg.sum(sg.astype(v, sg.f16).astype(sg.f32) * c))(x)
        self.assertEqual(g.dtype, sg.f32)
        np.testing.assert_array_equal(g, c.astype(np.float16).astype(np.float32))  # an f16 cotangent on the way
        g = sg.grad(lambda v: sg.sum(sg.astype(v, sg.f32) * c))(x.astype(np.float16))
        self.assertEqual(g.dtype, sg.f16)
        np.testing.assert_array_equal(g, c.astype(np.float16))
        # to int or bool: no gradient
        g = sg.grad(lambda v: sg.sum(v.astype(sg.i64).astype(sg.f32) + (v > 0).astype(sg.f32)))(x)
        np.testing.assert_array_equal(g, np.zeros(4))

    def test_ties(self):
        x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0]], np.float32)
        g = sg.grad(lambda v: sg.sum(sg.max(v, axis=1)))(x)
        np.testing.assert_allclose(g, [[0, 0.5, 0.5, 0], [0.25] * 4])
        g = sg.grad(lambda v: sg.min(v))(np.array([2.0, 1.0, 1.0], np.float32))
        np.testing.assert_allclose(g, [0, 0.5, 0.5])
        g = sg.grad(lambda v: sg.sum(sg.maximum(v, 1.0)))(np.array([1.0, 2.0, 0.0], np.float32))
        np.testing.assert_allclose(g, [0.5, 1.0, 0.0])
        g = sg.grad(lambda v: sg.sum(sg.relu(v) + sg.abs(v)))(np.array([0.0, 2.0, -1.0], np.float32))
        np.testing.assert_allclose(g, [0.0, 2.0, -1.0])
        # max_pool2d: the first maximal cell of the window (row-major) takes it all.
        x = np.array([1, 4, 4, 2], np.float32).reshape(1, 2, 2, 1)
        g = sg.grad(lambda v: sg.sum(sg.max_pool2d(v, 2)))(x)
        np.testing.assert_allclose(np.asarray(g).reshape(-1), [0, 1, 0, 0])

    def test_f16_gradients_are_f16(self):
        x = np.array([1.0, -2.0, 0.5], np.float16)
        g = sg.grad(lambda v: sg.sum(sg.tanh(v) * v))(x)
        self.assertEqual(g.dtype, sg.f16)
        ref = np.tanh(x.astype(np.float64)) + x * (1 - np.tanh(x.astype(np.float64)) ** 2)
        np.testing.assert_allclose(np.asarray(g, np.float64), ref, rtol=1e-2, atol=1e-2)
        w = np.ones((3, 2), np.float16)
        gw = sg.grad(lambda w: sg.sum(sg.layer_norm(Tensor(x) @ w, sg.ones(2, dtype=sg.f16), 0.0)), )(w)
        self.assertEqual(gw.dtype, sg.f16)

    def test_higher_order(self):
        f = lambda x: sg.sin(x) * x ** 3  # noqa: E731
        x = 0.7
        d2 = sg.grad(sg.grad(f))(x)
        want = -math.sin(x) * x ** 3 + 6 * math.cos(x) * x ** 2 + 6 * x * math.sin(x)
        self.assertAlmostEqual(float(d2), want, places=4)
        d3 = sg.grad(sg.grad(sg.grad(lambda x: x ** 4)))(1.5)
        self.assertAlmostEqual(float(d3), 24 * 1.5, places=3)
        # No perturbation confusion: d/dx [x * d/dy (x + y)] = 1.
        g = sg.grad(lambda x: x * sg.grad(lambda y: x + y)(1.0))(2.0)
        self.assertAlmostEqual(float(g), 1.0)
        # d/dx [d/dy (x * y * y) at y = 3] = 2y = 6.
        g = sg.grad(lambda x: sg.grad(lambda y: x * y * y)(3.0))(5.0)
        self.assertAlmostEqual(float(g), 6.0)
        # A Hessian-vector product through matmul, tanh and a reduction.
        a = rand(3, 3)
        v = rand(3)
        loss = lambda w: sg.sum(sg.tanh(Tensor(a) @ w))  # noqa: E731
        hvp = sg.grad(lambda w: sg.sum(sg.grad(loss)(w) * Tensor(v)))(rand(3))
        self.assertEqual(hvp.shape, (3,))
        w0 = rand(3)
        hvp = np.asarray(sg.grad(lambda w: sg.sum(sg.grad(loss)(w) * Tensor(v)))(w0), np.float64)
        t = np.tanh(a.astype(np.float64) @ w0)
        hess = a.T @ np.diag(-2 * t * (1 - t ** 2)) @ a
        np.testing.assert_allclose(hvp, hess @ v, rtol=1e-4, atol=1e-5)
        # Second derivatives of the convolution, pooling, gather and loss rules.
        x = rand(1, 4, 4, 2)
        wk = rand(2, 2, 2, 2)

        def conv_loss(w):
            return sg.sum(sg.square(sg.max_pool2d(sg.conv2d(Tensor(x), w, padding="SAME"), 2)))

        gg = sg.grad(lambda w: sg.sum(sg.grad(conv_loss)(w) * w))(wk)
        eps = 1e-3
        num = np.zeros(wk.shape)
        for i in np.ndindex(*wk.shape):
            p, m = wk.copy(), wk.copy()
            p[i] += eps
            m[i] -= eps
            gp = np.sum(np_of(sg.grad(conv_loss)(p)) * p)
            gm = np.sum(np_of(sg.grad(conv_loss)(m)) * m)
            num[i] = (gp - gm) / (float(p[i]) - float(m[i]))
        assert_grads_close(self, "grad of grad through conv2d and max_pool2d", [gg], [num])

    def test_grad_through_custom_ops(self):
        def swish_vjp(x, out, g):
            s = sg.sigmoid(x)
            return (g * (s + x * s * (1 - s)),)

        swish = sg.custom_op("test.swish", fn=lambda x: x * sg.sigmoid(x), result=lambda x: (x.dtype, x.shape),
                             vjp=swish_vjp)
        proj = sg.custom_op("test.proj", fn=lambda a, b: a @ b, result=lambda a, b: (a.dtype, (a.shape[0], b.shape[1])),
                            vjp=lambda a, b, out, g: (g @ b.T, None))
        x, w = rand(3, 4), rand(4, 2)
        g = sg.grad(lambda x: sg.sum(swish(x)))(x)
        s = 1 / (1 + np.exp(-x.astype(np.float64)))
        np.testing.assert_allclose(g, s + x * s * (1 - s), rtol=1e-5, atol=1e-6)
        ga, gb = sg.grad(lambda a, b: sg.sum(proj(a, b)), argnums=(0, 1))(x, w)
        np.testing.assert_allclose(ga, np.ones((3, 2)) @ w.T, rtol=1e-5, atol=1e-6)
        self.assertEqual(np.asarray(gb).tolist(), np.zeros((4, 2)).tolist())  # its vjp gives None
        plain = sg.custom_op("test.plain", fn=lambda x: x * 2.0, result=lambda x: (x.dtype, x.shape))
        with self.assertRaisesRegex(TypeError, "custom op 'test.plain'.*vjp="):
            sg.grad(lambda x: sg.sum(plain(x)))(x)
        self.assertEqual(np.asarray(plain(x)).tolist(), (x * 2).tolist())  # still fine without sg.grad
        bad = sg.custom_op("test.bad", fn=lambda x: x * 2.0, result=lambda x: (x.dtype, x.shape),
                           vjp=lambda x, out, g: (sg.sum(g),))
        with self.assertRaisesRegex(TypeError, "custom op 'test.bad'.*shape"):
            sg.grad(lambda x: sg.sum(bad(x)))(x)


# ---- the API ----------------------------------------------------------------------------------

Params = collections.namedtuple("Params", ["w", "b"])


class Typed(typing.NamedTuple):
    w: Tensor
    scale: float


@dataclasses.dataclass
class Dense:
    w: Tensor
    b: Tensor
    activation: str = "tanh"


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: Tensor


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b
        self.name = "layer"
        self.extra = None

    def __call__(self, x):
        return sg.tanh(x @ self.w + self.b)


class Api(unittest.TestCase):
    def test_grad_value_and_grad_argnums_has_aux(self):
        x, y = rand(3), rand(3)

        def f(x, y, scale=2.0):
            return sg.sum(x * y) * scale

        g = sg.grad(f)(x, y)
        np.testing.assert_allclose(g, 2 * y)
        gx, gy = sg.grad(f, argnums=(0, 1))(x, y, scale=3.0)
        np.testing.assert_allclose(gx, 3 * y)
        np.testing.assert_allclose(gy, 3 * x)
        (gy_only,) = sg.grad(f, argnums=(1,))(x, y)
        np.testing.assert_allclose(gy_only, 2 * x)
        np.testing.assert_allclose(sg.grad(f, argnums=-1)(x, y), 2 * x)
        v, g = sg.value_and_grad(f)(x, y)
        self.assertIsInstance(v, Tensor)
        self.assertAlmostEqual(float(v), float(np.sum(x.astype(np.float64) * y) * 2), places=5)

        def with_aux(x):
            h = sg.tanh(x)
            return sg.sum(h), {"h": h, "n": 3}

        g, aux = sg.grad(with_aux, has_aux=True)(x)
        np.testing.assert_allclose(g, 1 - np.tanh(x) ** 2, rtol=1e-5)
        self.assertEqual(aux["n"], 3)
        self.assertIsNone(aux["h"]._t)  # aux comes out as plain tensors
        (v, aux), g = sg.value_and_grad(with_aux, has_aux=True)(x)
        np.testing.assert_allclose(aux["h"], np.tanh(x), rtol=1e-6)
        self.assertAlmostEqual(float(v), float(np.sum(np.tanh(x))), places=5)
        # A result that does not depend on the argument: zero gradients.
        np.testing.assert_array_equal(sg.grad(lambda x, y: sg.sum(y))(x, y), np.zeros(3))
        self.assertEqual(float(sg.grad(lambda x: 2.0)(1.5)), 0.0)
        # Python floats are f32 scalars; the gradient of one is an f32 scalar.
        g = sg.grad(lambda s: s * s * 3.0)(2.0)
        self.assertEqual((g.dtype, g.shape, float(g)), (sg.f32, (), 12.0))

    def test_structures(self):
        w1, b1, w2, b2 = rand(3, 4), rand(4), rand(4, 2), rand(2)
        x = Tensor(rand(5, 3))

        def loss(params):
            h = params["layers"][0](x)
            d = params["layers"][1]
            h = sg.tanh(h @ d.w + d.b) * params["scale"]
            t = params["tuple"]
            return sg.sum(h) + sg.sum(t[0].w * t[1].w) * t[1].scale + sg.sum(params["frozen"].w)

        params = {"layers": [Layer(Tensor(w1), b1), Dense(Tensor(w2), Tensor(b2))],
                  "scale": 0.5,
                  "tuple": (Params(Tensor(w2), None), Typed(Tensor(w2), 2.0)),
                  "frozen": Frozen(Tensor(b1)),
                  "label": "mlp", "none": None}
        g = sg.grad(loss)(params)
        self.assertEqual(type(g), dict)
        self.assertEqual(list(g), list(params))
        self.assertEqual(type(g["layers"]), list)
        layer, dense = g["layers"]
        self.assertIs(type(layer), Layer)
        self.assertIsNot(layer, params["layers"][0])
        self.assertEqual((layer.name, layer.extra), ("layer", None))
        self.assertIs(type(dense), Dense)
        self.assertEqual(dense.activation, "tanh")
        self.assertIs(type(g["tuple"][0]), Params)
        self.assertIsNone(g["tuple"][0].b)
        self.assertIs(type(g["tuple"][1]), Typed)
        self.assertIs(type(g["frozen"]), Frozen)
        self.assertEqual((g["label"], g["none"]), ("mlp", None))
        self.assertEqual((g["scale"].dtype, g["scale"].shape), (sg.f32, ()))
        for got, want in ((layer.w, w1), (layer.b, b1), (dense.w, w2), (dense.b, b2), (g["frozen"].w, b1)):
            self.assertIsInstance(got, Tensor)
            self.assertEqual((got.dtype, got.shape), (sg.f32, want.shape))
        # Against finite differences of a flat parameter vector.
        flat = [w1, b1, w2, b2]

        def flat_loss(w1, b1, w2, b2):
            p = dict(params, layers=[Layer(w1, b1), Dense(w2, b2)])
            return loss(p)

        want = numeric_vjp(flat_loss, flat, np.array(1.0), 1e-3)
        assert_grads_close(self, "structured gradient", [layer.w, layer.b, dense.w, dense.b], want)
        np.testing.assert_allclose(g["tuple"][0].w, w2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(g["tuple"][1].w, w2 * 2.0, rtol=1e-6)
        self.assertAlmostEqual(float(g["tuple"][1].scale), float(np.sum(w2.astype(np.float64) ** 2)), places=4)
        np.testing.assert_allclose(g["frozen"].w, np.ones(4))

    def test_vjp(self):
        x = rand(3)

        def f(x):
            return {"double": x * 2.0, "parts": [sg.sum(x), sg.tanh(x)], "count": sg.argmax(x)}

        out, pullback = sg.vjp(f, x)
        self.assertEqual(sorted(out), ["count", "double", "parts"])
        self.assertIsNone(out["double"]._t)
        (g,) = pullback({"double": np.ones(3, np.float32), "parts": [1.0, np.full(3, 2.0, np.float32)],
                         "count": None})
        np.testing.assert_allclose(g, 2 + 1 + 2 * (1 - np.tanh(x) ** 2), rtol=1e-5)
        (g2,) = pullback({"double": np.zeros(3, np.float32), "parts": [0.0, np.zeros(3, np.float32)],
                          "count": None})
        np.testing.assert_array_equal(g2, np.zeros(3))  # a pullback runs as often as needed
        a, b = rand(2, 3), rand(3, 4)
        out, pullback = sg.vjp(sg.matmul, a, b)
        ct = rand(2, 4)
        ga, gb = pullback(ct)
        np.testing.assert_allclose(ga, ct @ b.T, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gb, a.T @ ct, rtol=1e-5, atol=1e-6)
        out, pullback, aux = sg.vjp(lambda x: (x * 3.0, "aux"), x, has_aux=True)
        self.assertEqual(aux, "aux")
        np.testing.assert_allclose(pullback(np.ones(3, np.float32))[0], [3.0] * 3)
        with self.assertRaisesRegex(TypeError, "shape"):
            pullback(np.ones(4, np.float32))
        with self.assertRaisesRegex(TypeError, "structure"):
            sg.vjp(f, x)[1](np.ones(3, np.float32))

    def test_stop_gradient_and_checkpoint(self):
        x = rand(4)
        g = sg.grad(lambda v: sg.sum(sg.stop_gradient(v) * v))(x)
        np.testing.assert_allclose(g, x)
        g = sg.grad(lambda v: sg.sum(sg.stop_gradient({"a": v})["a"] * 3.0))(x)
        np.testing.assert_array_equal(g, np.zeros(4))

        def block(h, w):
            return sg.tanh(h @ w) + h

        w = rand(4, 4)

        def loss(w, wrap):
            h = Tensor(x)
            for _ in range(3):
                h = wrap(block)(h, w)
            return sg.sum(h * h)

        plain = sg.value_and_grad(loss)(w, lambda f: f)
        ckpt = sg.value_and_grad(loss)(w, sg.checkpoint)
        self.assertEqual(float(plain[0]), float(ckpt[0]))
        np.testing.assert_array_equal(plain[1], ckpt[1])

    def test_errors(self):
        x = rand(3)
        with self.assertRaisesRegex(TypeError, r"sg.grad: argument 0 has integer dtype i64; differentiate "
                                               r"with respect to a float value \(cast it with .astype\(sg.f32\)\)"):
            sg.grad(lambda v: sg.sum(v.astype(sg.f32)))(np.arange(3))
        with self.assertRaisesRegex(TypeError, "argument 1 at \\['n'\\] has integer dtype i32"):
            sg.grad(lambda a, p: sg.sum(a), argnums=1)(x, {"w": x, "n": np.int32(3)})
        with self.assertRaisesRegex(TypeError, "dtype bool"):
            sg.grad(lambda v: sg.sum(v.astype(sg.f32)))(np.array([True]))
        with self.assertRaisesRegex(TypeError, "argument 0 at .n is a Python int"):
            sg.grad(lambda p: p.x)(_obj(x=Tensor(x), n=3))
        with self.assertRaisesRegex(TypeError, "sg.value_and_grad: argument 0 is a Python int"):
            sg.value_and_grad(lambda n: n * 1.0)(3)
        with self.assertRaisesRegex(TypeError, r"scalar float.*got f32\[3\]; use sg.vjp"):
            sg.grad(lambda v: v * 2.0)(x)
        with self.assertRaisesRegex(TypeError, r"scalar float.*got i64\[\]"):
            sg.grad(lambda v: sg.argmax(v))(x)
        with self.assertRaisesRegex(TypeError, "scalar float.*got str"):
            sg.grad(lambda v: "loss")(x)
        with self.assertRaisesRegex(TypeError, "has_aux=True.*pair"):
            sg.grad(lambda v: sg.sum(v), has_aux=True)(x)
        with self.assertRaisesRegex(TypeError, "argnums 2 is out of range"):
            sg.grad(lambda v: sg.sum(v), argnums=2)(x)

    def test_inside_and_outside_functions(self):
        @sg.function
        def model(x: sg.f32["N", 3], w: sg.f32[3, 2]):
            return sg.sum(sg.tanh(x @ w))

        @sg.function
        def train_step(x: sg.f32["N", 3], w: sg.f32[3, 2], b: sg.f32[2]):
            def loss(params):
                return sg.mean(sg.square(sg.tanh(x @ params.w + params.b)))
            value, g = sg.value_and_grad(loss)(Params(w, b))
            return {"loss": value, "grads": g, "list": [g.w, g.b], "dense": Dense(g.w, g.b)}

        x, w, b = rand(4, 3), rand(3, 2), rand(2)
        # sg.grad of an entry point, from plain Python: the entry is called on Tensors.
        g = sg.grad(model, argnums=1)(x, w)
        t = np.tanh(x.astype(np.float64) @ w)
        np.testing.assert_allclose(g, x.T @ (1 - t ** 2), rtol=1e-5, atol=1e-6)
        # sg.grad inside an entry point; the nested result crosses the boundary as NumPy.
        out = train_step(x, w, b)
        self.assertIs(type(out["grads"]), Params)
        self.assertIs(type(out["grads"].w), np.ndarray)
        self.assertIs(type(out["list"]), list)
        self.assertIs(type(out["dense"]), Dense)
        self.assertIs(type(out["dense"].b), np.ndarray)
        self.assertEqual(out["dense"].activation, "tanh")  # static attributes come out as they are
        h = np.tanh(x.astype(np.float64) @ w + b)
        dh = 2 * h * (1 - h ** 2) / h.size
        np.testing.assert_allclose(out["grads"].w, x.T @ dh, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["grads"].b, dh.sum(0), rtol=1e-5, atol=1e-6)
        self.assertIs(type(out["loss"]), np.ndarray)
        # A plain Python function calling an entry point, differentiated from outside.
        g = sg.grad(lambda w: model(x, w) * 2.0)(w)
        np.testing.assert_allclose(g, 2 * x.T @ (1 - t ** 2), rtol=1e-5, atol=1e-6)
        # Outside any sg.grad nothing is traced.
        self.assertIsNone((Tensor(x) * 2.0)._t)


def _obj(**attrs):
    o = Layer.__new__(Layer)
    o.__dict__.update(attrs)
    return o


# ---- control flow ----------------------------------------------------------------------------

H = 4


def encode(i, offset, xs, w_leaf, w):
    """tests/programs/recursion_tree_rnn.py's recursion."""
    left = i + 1
    right = left + sg.take(offset, i)
    if right >= xs.shape[0]:
        h = sg.tanh(sg.take(xs, i, axis=0) @ w_leaf)
    else:
        h_left = encode(left, offset, xs, w_leaf, w)
        h_right = encode(right, offset, xs, w_leaf, w)
        h = sg.tanh(sg.concatenate([h_left, h_right, xs[i]]) @ w)
    return h


class ControlFlow(unittest.TestCase):
    def test_data_dependent_while_loop(self):
        def f(x, w):
            h = x
            steps = 0
            while sg.max(h) < 10.0:  # the trip count depends on x
                h = h * 2.0 + sg.tanh(h @ w) * 0.01
                steps += 1
                if steps > 50:
                    break
            return sg.sum(h * h)

        x = np.array([0.3, 0.55, 0.1], np.float32)
        w = rand(3, 3)
        got = sg.grad(f, argnums=(0, 1))(x, w)
        assert_grads_close(self, "while loop", got, numeric_vjp(f, [x, w], np.array(1.0), 1e-2))

    def test_sg_range_with_a_count_from_data_and_branches(self):
        def f(x, n):
            acc = sg.zeros(())
            for i in sg.range(int(sg.argmax(n)) + 2):
                if sg.sum(x[i]) > 0:
                    acc = acc + sg.sum(sg.exp(x[i]))
                elif i % 2 == 0:
                    acc = acc - sg.sum(x[i] * x[i])
                else:
                    continue
            return acc

        x = away(5, 3, gap=0.3)
        n = Tensor(np.array([0, 3, 1], np.int64))
        g = sg.grad(f)(x, n)
        want = numeric_vjp(lambda x: f(x, n), [x], np.array(1.0), 1e-3)
        assert_grads_close(self, "sg.range and branches", [g], want)

    def test_recursion_tree_rnn(self):
        rng = np.random.default_rng(5)
        m = 7
        offset = Tensor(rng.integers(1, 4, m).astype(np.int64))
        xs = rng.standard_normal((m, H)).astype(np.float32)
        w_leaf = (rng.standard_normal((H, H)) * 0.5).astype(np.float32)
        w = (rng.standard_normal((3 * H, H)) * 0.4).astype(np.float32)
        root = Tensor(np.array(0, np.int64))

        def loss(xs, w_leaf, w):
            return sg.sum(sg.square(encode(root, offset, xs, w_leaf, w)))

        got = sg.grad(loss, argnums=(0, 1, 2))(xs, w_leaf, w)
        want = numeric_vjp(loss, [xs, w_leaf, w], np.array(1.0), 1e-3)
        assert_grads_close(self, "tree rnn", got, want)

    def test_python_recursion_and_loop_in_an_entry(self):
        def power(x, n):
            return x if n == 1 else x * power(x, n - 1)

        @sg.function
        def entry(x: sg.f32[3]):
            return sg.grad(lambda v: sg.sum(power(v, 4)))(x)

        x = rand(3)
        np.testing.assert_allclose(entry(x), 4 * x.astype(np.float64) ** 3, rtol=1e-5)


# ---- losses -----------------------------------------------------------------------------------

def log_softmax64(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


class Losses(unittest.TestCase):
    def test_against_float64_formulas(self):
        x = rand(5, 4, lo=-3, hi=3)
        x64 = x.astype(np.float64)
        labels = np.array([0, 3, 1, 1, 2], np.int64)
        want = -np.mean(log_softmax64(x64)[np.arange(5), labels])
        self.assertAlmostEqual(float(nn.cross_entropy(x, labels)), want, places=5)
        self.assertAlmostEqual(float(sg.nn.cross_entropy(x, labels.astype(np.int32))), want, places=5)
        soft = RNG.dirichlet(np.ones(4), 5).astype(np.float32)
        want = np.mean(-np.sum(soft * log_softmax64(x64), -1))
        self.assertAlmostEqual(float(nn.cross_entropy(x, soft)), want, places=5)
        t = rand(5, 4, lo=0, hi=1)
        want = np.mean(np.log1p(np.exp(-x64)) * t + np.log1p(np.exp(x64)) * (1 - t))
        self.assertAlmostEqual(float(nn.binary_cross_entropy_with_logits(x, t)), want, places=5)
        p = rand(5, 4)
        self.assertAlmostEqual(float(nn.mse(p, t)), np.mean((p.astype(np.float64) - t) ** 2), places=6)
        self.assertAlmostEqual(float(nn.l1(p, t)), np.mean(np.abs(p.astype(np.float64) - t)), places=6)
        lse = np.log(np.exp(x64).sum(1))
        np.testing.assert_allclose(sg.logsumexp(x, axis=1), lse, rtol=1e-6)
        np.testing.assert_allclose(sg.logsumexp(x, axis=-1, keepdims=True), lse[:, None], rtol=1e-6)
        self.assertAlmostEqual(float(sg.logsumexp(x)), float(np.log(np.exp(x64).sum())), places=5)
        self.assertEqual(sg.logsumexp(np.arange(3)).dtype, sg.f32)
        self.assertEqual(sg.logsumexp(x.astype(np.float16), axis=0).dtype, sg.f16)
        self.assertEqual(float(sg.logsumexp(np.array([-np.inf, -np.inf], np.float32))), -np.inf)
        # The spellings: sg.nn re-exports the ops.
        for name in ("softmax", "log_softmax", "relu", "gelu", "sigmoid", "one_hot", "layer_norm", "conv2d",
                     "max_pool2d", "avg_pool2d", "logsumexp"):
            self.assertIs(getattr(nn, name), getattr(sg, name))
        self.assertIs(sg.nn, nn)
        # Gradients of the integer-label cross-entropy: (softmax - one_hot) / N.
        g = sg.grad(nn.cross_entropy)(x, labels)
        sm = np.exp(log_softmax64(x64))
        np.testing.assert_allclose(g, (sm - np.eye(4)[labels]) / 5, rtol=1e-5, atol=1e-6)
        g = sg.grad(nn.binary_cross_entropy_with_logits)(x, t)
        np.testing.assert_allclose(g, (1 / (1 + np.exp(-x64)) - t) / t.size, rtol=1e-5, atol=1e-7)

    def test_stable_at_large_logits(self):
        big = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0]], np.float32)
        labels = np.array([1, 2], np.int64)
        v, g = sg.value_and_grad(nn.cross_entropy)(big, labels)
        self.assertAlmostEqual(float(v), 1000.0, places=2)  # (2000 + 0) / 2
        self.assertTrue(np.all(np.isfinite(np.asarray(g))))
        np.testing.assert_allclose(g, [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]], atol=1e-6)
        t = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]], np.float32)
        v, g = sg.value_and_grad(nn.binary_cross_entropy_with_logits)(big, t)
        want = np.mean(np.maximum(big, 0) - big * t + np.log1p(np.exp(-np.abs(big.astype(np.float64)))))
        self.assertAlmostEqual(float(v), want, places=2)
        self.assertTrue(np.all(np.isfinite(np.asarray(g))))
        np.testing.assert_allclose(g, ((big > 0).astype(np.float64) + 0.5 * (big == 0) - t) / 6, atol=1e-6)
        v, g = sg.value_and_grad(lambda x: sg.sum(sg.logsumexp(x, axis=1)))(big)
        self.assertAlmostEqual(float(v), 2000.0, places=2)
        np.testing.assert_allclose(g, [[1, 0, 0], [0, 0, 1]], atol=1e-6)
        v = sg.logsumexp(np.array([-1000.0, -1000.0], np.float32))
        self.assertAlmostEqual(float(v), -1000.0 + math.log(2), places=3)
        g = sg.grad(lambda x: sg.logsumexp(x))(np.array([1000.0, 1000.0], np.float32))
        np.testing.assert_allclose(g, [0.5, 0.5])
        v, g = sg.value_and_grad(lambda x: sg.sum(sg.log_softmax(x)))(big)
        self.assertTrue(np.isfinite(float(v)) and np.all(np.isfinite(np.asarray(g))))
        v, g = sg.value_and_grad(lambda p: nn.mse(p, 0.0) + nn.l1(p, 1.0))(big)
        self.assertTrue(np.isfinite(float(v)) and np.all(np.isfinite(np.asarray(g))))

    def test_loss_argument_checks(self):
        x = rand(4, 1)
        with self.assertRaisesRegex(ValueError, r"mse: a target of shape \[4\] does not match predictions of shape "
                                                r"\[4, 1\]"):
            nn.mse(x, rand(4))
        with self.assertRaisesRegex(ValueError, "labels of shape"):
            nn.cross_entropy(rand(4, 3), np.array([0, 1], np.int64))
        with self.assertRaisesRegex(IndexError, "label 3 is out of range for 3 classes"):
            nn.cross_entropy(rand(2, 3), np.array([0, 3], np.int64))
        with self.assertRaisesRegex(TypeError, "logits must be f32 or f16"):
            nn.binary_cross_entropy_with_logits(np.arange(3), np.ones(3, np.float32))


if __name__ == "__main__":
    print(f"numpy {np.__version__}", file=sys.stderr)
    unittest.main()
