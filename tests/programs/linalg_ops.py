"""sg.linalg: inv, solve (a matrix and a vector right-hand side, batch dims
broadcast), det, slogdet, cholesky, triangular_solve, qr, eigh and norm, on a
symbolic batch, reached as `sg.linalg.X` and through `from stagegraph import linalg`;
a singular matrix gives NaN (inv, solve) and (0, -inf) (slogdet)."""
import stagegraph as sg
from stagegraph import linalg

# e2e: N=1,3 runs=2


@sg.function
def systems(a: sg.f32["N", 3, 3], b: sg.f32["N", 3, 2], v: sg.f32[3], m: sg.f32[3, 3]):
    well = a + 4.0 * sg.eye(3)                 # diagonally dominant enough
    x = sg.linalg.solve(well, b)
    xv = linalg.solve(well, v)                 # a vector, broadcast over the batch
    xm = sg.linalg.solve(m + 4.0 * sg.eye(3), b)  # a single matrix against a batch
    ai = sg.linalg.inv(well)
    d = sg.linalg.det(well)
    sign, logdet = sg.linalg.slogdet(well - 8.0 * sg.eye(3))
    spd = sg.matmul(a, sg.transpose(a, (0, 2, 1))) + 3.0 * sg.eye(3)
    chol = sg.linalg.cholesky(spd)
    lo = sg.linalg.triangular_solve(chol, b, lower=True)
    up = sg.linalg.triangular_solve(sg.transpose(chol, (0, 2, 1)), v, lower=False)
    return x, xv, xm, ai, d, sign, logdet, chol, lo, up


@sg.function
def factor(a: sg.f32["N", 4, 3], s: sg.f32[4, 4]):
    q, r = sg.linalg.qr(a)
    qt, rt = sg.linalg.qr(sg.transpose(a, (0, 2, 1)))  # wide: q [3, 3], r [3, 4]
    w, vecs = sg.linalg.eigh(s + sg.transpose(s))
    wu, _ = sg.linalg.eigh(s, UPLO="U")
    return q, r, qt, rt, w, vecs, wu


@sg.function
def norms(x: sg.f32["N", 5], m: sg.f32[3, 4], k: sg.i32[4]):
    return (sg.linalg.norm(x), sg.linalg.norm(x, axis=1), sg.linalg.norm(x, ord=1, axis=-1),
            sg.linalg.norm(x, ord=float("inf"), axis=1, keepdims=True), sg.linalg.norm(x, ord=3, axis=1),
            sg.linalg.norm(x, ord=0, axis=1), sg.linalg.norm(m, "fro"), sg.linalg.norm(m, ord=1),
            sg.linalg.norm(m, ord=-float("inf")), sg.linalg.norm(m, axis=(1, 0), keepdims=True),
            sg.linalg.norm(k))


@sg.function
def singular(a: sg.f32[2, 3]):
    rows = sg.concatenate([a, a[:1]], axis=0)   # two equal rows: singular (exactly)
    sign, logdet = sg.linalg.slogdet(rows)
    return sg.linalg.inv(rows), sg.linalg.det(rows), sign, logdet


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3, 2)).astype(np.float32)
    out = systems(a=a, b=b, v=np.ones(3, np.float32), m=np.eye(3, dtype=np.float32))
    print("solve residual:", np.abs((a + 4 * np.eye(3)) @ out[0] - b).max())
    print("det:", out[4], "vs NumPy", np.linalg.det(a + 4 * np.eye(3)))
