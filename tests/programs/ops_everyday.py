"""Everyday NumPy ops (issue 36): searchsorted (both sides, NaN-free sorted
sequences made by sort), logaddexp, cumprod (axis, flattened, ints widen to i64),
diff (n, axis, bool, prepend/append), flip, roll (static and symbolic axes, shifts
known at run time), meshgrid (xy, ij), outer, einsum (matmul, batch, trace, diagonal,
implicit output, '...', three operands, ints, optimize= greedy and explicit paths) and isclose/allclose (rtol, atol, equal_nan)."""
import stagegraph as sg

# e2e: N=1,3 range.k=-3,3 range.c=1,3 runs=2


@sg.function
def search_and_scan(x: sg.f32["N", 5], q: sg.f32[4], k: sg.i64[6], c: sg.i32[2, 3]):
    edges = sg.sort(q)
    left = sg.searchsorted(edges, x)
    right = sg.searchsorted(edges, x, side="right")
    ks = sg.sort(k)
    kl = sg.searchsorted(ks, k, side="left")     # ties in both
    kr = sg.searchsorted(ks, k, side="right")
    scalar = sg.searchsorted(edges, 0.0)
    return {
        "left": left, "right": right, "kl": kl, "kr": kr, "scalar": scalar,
        "lae": sg.logaddexp(x, q[0]), "lae_int": sg.logaddexp(k, 1),
        "cp1": sg.cumprod(x * 0.5, axis=1), "cp0": sg.cumprod(x, 0), "cp_flat": sg.cumprod(c),
        "cp_bool": sg.cumprod(k > -2, axis=0), "cp_method": (x * 0.5).cumprod(axis=1),
    }


@sg.function
def rearrange(x: sg.f32["N", 5], b: sg.bool[6], k: sg.i64[6]):
    xs, ys = sg.meshgrid(k, x[0])
    xi, yi = sg.meshgrid(k, x[0], indexing="ij")
    return {
        "d1": sg.diff(x), "d2": sg.diff(x, n=2, axis=1), "d0": sg.diff(x, axis=0), "db": sg.diff(b),
        "dk": sg.diff(k, 3),
        "dp": sg.diff(x, prepend=0.0), "da": sg.diff(x, axis=0, append=x[:1]), "dpa": sg.diff(k, prepend=k[:2], append=7),
        "f": sg.flip(x), "f1": sg.flip(x, 1), "f0": sg.flip(x, axis=(0,)),
        "r": sg.roll(x, 2), "r1": sg.roll(x, -7, axis=1), "r0": sg.roll(x, 1, axis=0),
        "r01": sg.roll(x, (1, 2), (0, 1)), "rk": sg.roll(k, 4),
        "rt": sg.roll(x, k[0], axis=1), "rt0": sg.roll(x, k[1]), "rts": sg.roll(x, (k[2], 1), (0, 1)),
        "rtk": sg.roll(k, k[3] * 5),
        "xs": xs, "ys": ys, "xi": xi, "yi": yi,
        "o": sg.outer(x[0], k.astype(sg.f32)), "ob": sg.outer(b, b),
    }


@sg.function
def contractions(a: sg.f32["N", 4], w: sg.f32[4, 3], t: sg.f32[2, "N", 4], m: sg.f32[3, 3], c: sg.i32[2, 3]):
    return {
        "mm": sg.einsum("ij,jk->ik", a, w),
        "implicit": sg.einsum("ij,jk", a, w),
        "transposed": sg.einsum("ij->ji", a),
        "trace": sg.einsum("ii", m),
        "diag": sg.einsum("ii->i", m),
        "batch": sg.einsum("bij,jk->bik", t, w),
        "dots": sg.einsum("...j,jk->...k", t, w),
        "rows": sg.einsum("ij,ij->i", a, a),
        "total": sg.einsum("ij->", a),
        "outer": sg.einsum("i,j->ij", w[:, 0], w[0]),
        "chain": sg.einsum("ij,jk,kl->il", a, w, m),
        "chain_opt": sg.einsum("ij,jk,kl->il", a, w, m, optimize=True),
        "vec": sg.einsum("ij,jk,k->i", a, w, m[0], optimize="greedy"),
        "path": sg.einsum("ij,jk,kl->il", a, w, m, optimize=["einsum_path", (1, 2), (0, 1)]),
        "ints": sg.einsum("ij,kj->ik", c, c),
    }


@sg.function
def closeness(x: sg.f32["N", 5], y: sg.f32["N", 5], k: sg.i64[6]):
    near = x + y * 1e-6
    weird = sg.where(y > 1.0, x / 0.0, x)           # +-inf where y > 1
    nan = sg.where(y < -1.0, x * (x / 0.0) * 0.0, x)  # NaN where y < -1
    return {
        "same": sg.isclose(x, near), "far": sg.isclose(x, y), "rtol": sg.isclose(x, x * 1.05, rtol=0.1),
        "atol": sg.isclose(x, x + 0.5, atol=1.0), "inf": sg.isclose(weird, weird),
        "nan": sg.isclose(nan, nan), "nan_eq": sg.isclose(nan, nan, equal_nan=True),
        "ints": sg.isclose(k, k + 1, atol=1.0), "scalar": sg.isclose(x, 0.0),
        "all": sg.allclose(x, near), "all_far": sg.allclose(x, y),
    }


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    print(search_and_scan(x=x, q=np.array([0.5, -1.0, 0.0, 2.0], np.float32), k=np.array([3, 1, 1, -2, 0, 3]),
                          c=np.arange(6, dtype=np.int32).reshape(2, 3) + 1)["left"])
    print(contractions(a=x[:, :4], w=rng.normal(size=(4, 3)).astype(np.float32),
                       t=rng.normal(size=(2, 3, 4)).astype(np.float32), m=np.eye(3, dtype=np.float32),
                       c=np.ones((2, 3), np.int32))["trace"])
