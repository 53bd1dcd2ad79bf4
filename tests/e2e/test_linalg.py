"""sg.linalg (SPEC §7): eager mode against NumPy, the located compile errors of bad
operands, NaN on numerical failure, and differentiation (the eager VJP rules against
finite differences; qr and eigh refused with an error naming the op, compiled and
eager). The compiled programs against eager mode are tests/programs/linalg_ops.py,
the op-coverage cases (op_cases_linalg.py) and test_grad.py's linalg cases.

Run by ctest with /usr/bin/python3 (NumPy 1.24); it must pass unchanged on NumPy 2.x.
"""
import os
import sys
import tempfile
import textwrap
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "compiler", "python"))
import e2e_lib as lib  # noqa: E402
import stagegraph as sg  # noqa: E402
from stagegraph import Tensor  # noqa: E402

RNG = np.random.default_rng(36)


def f32(*shape, shift=0.0):
    a = RNG.standard_normal(shape).astype(np.float32)
    if shift:
        a = a + np.float32(shift) * np.eye(shape[-1], dtype=np.float32)
    return a


def arr(v):
    return np.asarray(v._a if isinstance(v, Tensor) else v)


def close(test, got, want, rtol=1e-4):
    got, want = arr(got), np.asarray(want)
    test.assertEqual(got.dtype, np.float32)
    test.assertEqual(got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=rtol * scale)


class EagerAgainstNumPy(unittest.TestCase):
    def test_inv_solve_det(self):
        a, b, v = f32(2, 4, 4, shift=3), f32(2, 4, 3), f32(4)
        a64 = a.astype(np.float64)
        close(self, sg.linalg.inv(a), np.linalg.inv(a64))
        close(self, sg.linalg.solve(a, b), np.linalg.solve(a64, b.astype(np.float64)))
        close(self, sg.linalg.solve(a, v), np.linalg.solve(a64, np.broadcast_to(v, (2, 4))[..., None])[..., 0])
        close(self, sg.linalg.solve(a[0], b), np.linalg.solve(a64[0], b.astype(np.float64)))  # broadcast batch
        close(self, sg.linalg.det(a), np.linalg.det(a64))
        sign, logdet = sg.linalg.slogdet(a)
        ws, wl = np.linalg.slogdet(a64)
        close(self, sign, ws)
        close(self, logdet, wl)

    def test_ints_are_f32(self):
        m = np.array([[2, 1], [1, 3]], np.int32)
        close(self, sg.linalg.inv(m), np.linalg.inv(m))
        close(self, sg.linalg.norm(np.arange(5)), np.linalg.norm(np.arange(5)))

    def test_cholesky_triangular(self):
        m = f32(3, 4, 4)
        spd = m @ np.swapaxes(m, -1, -2) + 2 * np.eye(4, dtype=np.float32)
        L = sg.linalg.cholesky(spd)
        close(self, L, np.linalg.cholesky(spd.astype(np.float64)))
        b = f32(3, 4, 2)
        x = sg.linalg.triangular_solve(L, b, lower=True)
        close(self, x, np.linalg.solve(arr(L).astype(np.float64), b))
        up = np.swapaxes(arr(L), -1, -2)
        close(self, sg.linalg.triangular_solve(up + np.tril(np.ones((4, 4), np.float32), -1) * 50, b),
              np.linalg.solve(up.astype(np.float64), b))  # the lower part is never read

    def test_qr_eigh(self):
        for shape in ((5, 3), (3, 5), (2, 4, 4)):
            a = f32(*shape)
            q, r = sg.linalg.qr(a)
            a64 = a.astype(np.float64)
            if a.ndim == 2:
                wq, wr = np.linalg.qr(a64)
            else:
                wq, wr = zip(*(np.linalg.qr(m) for m in a64))
                wq, wr = np.stack(wq), np.stack(wr)
            close(self, q, wq)
            close(self, r, wr)
        s = f32(2, 5, 5)
        s = s + np.swapaxes(s, -1, -2)
        w, v = sg.linalg.eigh(s)
        ww, wv = np.linalg.eigh(s.astype(np.float64))
        close(self, w, ww)
        close(self, np.abs(arr(v)), np.abs(wv))
        big = np.take_along_axis(arr(v), np.argmax(np.abs(arr(v)), axis=-2)[..., None, :], axis=-2)
        self.assertTrue(np.all(big > 0))
        wu, _ = sg.linalg.eigh(np.triu(s), UPLO="U")
        close(self, wu, ww)

    def test_norm(self):
        x = f32(3, 4, 5)
        x64 = x.astype(np.float64)
        cases = [({}, {}), ({"axis": 1}, {}), ({"ord": 1, "axis": -1}, {}), ({"ord": np.inf, "axis": 0}, {}),
                 ({"ord": -np.inf, "axis": 2, "keepdims": True}, {}), ({"ord": 0, "axis": 1}, {}),
                 ({"ord": 3, "axis": 1}, {}), ({"ord": "fro", "axis": (0, 2)}, {}),
                 ({"ord": 1, "axis": (2, 1)}, {}), ({"ord": -np.inf, "axis": (0, 1), "keepdims": True}, {}),
                 ({"keepdims": True}, {})]
        for kw, _ in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                close(self, sg.linalg.norm(x, **kw), np.linalg.norm(x64, **kw))
        close(self, sg.linalg.norm(x[0], ord=np.inf), np.linalg.norm(x64[0], ord=np.inf))
        with self.assertRaisesRegex(ValueError, "nuc"):
            sg.linalg.norm(x[0], ord="nuc")

    def test_failure_gives_nan(self):
        sing = np.array([[[1, 2], [2, 4]], [[2, 0], [0, 4]]], np.float32)
        inv = arr(sg.linalg.inv(sing))
        self.assertTrue(np.all(np.isnan(inv[0])))
        close(self, inv[1], np.linalg.inv(sing[1].astype(np.float64)))
        sign, logdet = sg.linalg.slogdet(sing)
        self.assertEqual(arr(sign)[0], 0)
        self.assertEqual(arr(logdet)[0], -np.inf)
        self.assertEqual(arr(sg.linalg.det(sing))[0], 0)
        self.assertTrue(np.all(np.isnan(arr(sg.linalg.cholesky(-np.eye(3, dtype=np.float32))))))
        self.assertTrue(np.all(np.isnan(arr(sg.linalg.solve(np.zeros((2, 2), np.float32), np.ones(2, np.float32))))))

    def test_bad_operands(self):
        for call, pattern in [(lambda: sg.linalg.inv(np.ones((2, 3), np.float32)), "square"),
                              (lambda: sg.linalg.det(np.ones(3, np.float32)), "rank 2 or more"),
                              (lambda: sg.linalg.solve(np.eye(3, dtype=np.float32), np.ones(4, np.float32)), "fit"),
                              (lambda: sg.linalg.solve(np.ones((2, 3, 3), np.float32), np.ones((4, 3, 1), np.float32)),
                               "broadcast"),
                              (lambda: sg.linalg.cholesky(np.eye(2, dtype=np.float16)), "f16"),
                              (lambda: sg.linalg.qr(np.eye(2, dtype=np.float32), mode="complete"), "reduced")]:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex((ValueError, TypeError), pattern):
                    call()


def numeric_grad(loss, x, eps=1e-3):
    g = np.zeros(x.shape)
    for i in np.ndindex(*x.shape):
        p, m = x.copy(), x.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (float(arr(loss(Tensor(p)))) - float(arr(loss(Tensor(m))))) / (float(p[i]) - float(m[i]))
    return g


class EagerGradients(unittest.TestCase):
    def check(self, loss, x):
        got = arr(sg.grad(loss)(x)).astype(np.float64)
        want = numeric_grad(loss, x)
        np.testing.assert_allclose(got, want, atol=2e-2 * max(1.0, float(np.max(np.abs(want)))))

    def test_rules(self):
        eye = np.eye(3, dtype=np.float32)
        b = f32(3, 2)
        cases = {
            "inv": lambda x: sg.sum(sg.sin(sg.linalg.inv(x + 4.0 * eye))),
            "solve_a": lambda x: sg.sum(sg.sin(sg.linalg.solve(x + 4.0 * eye, b))),
            "solve_b": lambda x: sg.sum(sg.sin(sg.linalg.solve(b[:, :1] @ b[:, :1].T + 4.0 * eye, x))),
            "det": lambda x: sg.linalg.det(x + 2.0 * eye),
            "slogdet": lambda x: sg.linalg.slogdet(x + 4.0 * eye)[1],
            "tri_lower": lambda x: sg.sum(sg.sin(sg.linalg.triangular_solve(x + 4.0 * eye, b, lower=True))),
            "tri_upper": lambda x: sg.sum(sg.sin(sg.linalg.triangular_solve(x + 4.0 * eye, b))),
            "cholesky": lambda x: sg.sum(sg.sin(sg.linalg.cholesky(x @ x.T + 3.0 * eye))),
            "norm": lambda x: sg.linalg.norm(x) + sg.sum(sg.linalg.norm(x, ord=3, axis=0)),
        }
        for name, loss in cases.items():
            with self.subTest(op=name):
                self.check(loss, f32(3, 3) if name != "solve_b" else f32(3, 2))

    def test_qr_eigh_refused(self):
        for name, fn in (("qr", lambda x: sg.sum(sg.linalg.qr(x)[1])), ("eigh", lambda x: sg.sum(sg.linalg.eigh(x)[0]))):
            with self.subTest(op=name):
                with self.assertRaisesRegex(TypeError, f"'{name}'"):
                    sg.grad(fn)(f32(3, 3))


def compile_source(source):
    """graph-compile's result on `source`: (returncode, stderr)."""
    with tempfile.TemporaryDirectory() as d:
        py = os.path.join(d, "prog.py")
        with open(py, "w") as f:
            f.write(textwrap.dedent(source))
        proc = lib.run_tool("graph-compile", [py, "-o", os.path.join(d, "prog.sgraph")])
        return proc.returncode, proc.stderr


class CompileErrors(unittest.TestCase):
    CASES = {
        "inv of a non-square matrix": ("sg.linalg.inv(a)", "a: sg.f32[3, 4]", "square"),
        "det of a vector": ("sg.linalg.det(v)", "v: sg.f32[3]", "rank 2 or more"),
        "solve that does not fit": ("sg.linalg.solve(m, v)", "m: sg.f32[3, 3], v: sg.f32[4]", "fit"),
        "solve of unbroadcastable batches": ("sg.linalg.solve(b, c)", "b: sg.f32[2, 3, 3], c: sg.f32[4, 3, 1]",
                                             "broadcast"),
        "cholesky of a symbolic non-square": ("sg.linalg.cholesky(s)", "s: sg.f32['N', 3, 4]", "square"),
        "f16": ("sg.linalg.eigh(h)", "h: sg.f16[2, 2]", "f16"),
        "no such function": ("sg.linalg.svd(m)", "m: sg.f32[3, 3]", "svd"),
        "grad through qr": ("sg.grad(qr_loss)(m)", "m: sg.f32[3, 3]", "sg.linalg.qr"),
        "grad through eigh": ("sg.grad(eigh_loss)(m)", "m: sg.f32[3, 3]", "sg.linalg.eigh"),
        "matrix norm of ord 2": ("sg.linalg.norm(m, ord=2)", "m: sg.f32[3, 3]", "singular values"),
    }

    def test_located(self):
        for name, (expr, params, pattern) in self.CASES.items():
            with self.subTest(case=name):
                rc, err = compile_source(f"""
                    import stagegraph as sg


                    @sg.function
                    def f({params}):
                        return {expr}


                    def qr_loss(x):
                        return sg.sum(sg.linalg.qr(x)[1])


                    def eigh_loss(x):
                        return sg.sum(sg.linalg.eigh(x)[0])
                    """)
                self.assertNotEqual(rc, 0, err)
                self.assertIn(pattern, err)
                self.assertRegex(err, r"prog\.py:(7|11|15):\d+")  # the line of the call


if __name__ == "__main__":
    print(f"numpy {np.__version__}", file=sys.stderr)
    unittest.main()
