"""Op-coverage cases of sg.linalg's ops (f32 only: their rules refuse other dtypes),
on a symbolic batch N (0 among its bindings), size-0 and size-1 matrices and
broadcast batch dims (see op_cases.py)."""

from op_cases_base import Program

_PARAMS = "a: sg.f32['N', 3, 3], b: sg.f32['N', 3, 2], v: sg.f32[3], o: sg.f32[1, 1], z: sg.f32[2, 0, 0]"


def _case(body, params=_PARAMS):
    def gen(t):
        return Program(params, body) if t == "f32" else None
    return gen


_INV = _case("""
    w = a + 4.0 * sg.eye(3)
    return {"batch": sg.linalg.inv(w), "one": sg.linalg.inv(o + 2.0), "z": sg.linalg.inv(z)}
    """)

_SOLVE = _case("""
    w = a + 4.0 * sg.eye(3)
    return {
        "mat": sg.linalg.solve(w, b),
        "vec": sg.linalg.solve(w, v),
        "bcast": sg.linalg.solve(w[:1], b),
        "z": sg.linalg.solve(z, sg.zeros((2, 0, 3))),
    }
    """)

_SLOGDET = _case("""
    w = a + 2.0 * sg.eye(3)
    sign, logdet = sg.linalg.slogdet(w)
    zs, zl = sg.linalg.slogdet(z)
    return {"sign": sign, "logdet": logdet, "det": sg.linalg.det(w), "zs": zs, "zl": zl,
            "one": sg.linalg.det(o)}
    """)

_CHOLESKY = _case("""
    spd = sg.matmul(a, sg.transpose(a, (0, 2, 1))) + 2.0 * sg.eye(3)
    return {"batch": sg.linalg.cholesky(spd), "bad": sg.linalg.cholesky(-spd), "z": sg.linalg.cholesky(z)}
    """)

_TRIANGULAR = _case("""
    w = a + 4.0 * sg.eye(3)
    return {
        "lower": sg.linalg.triangular_solve(w, b, lower=True),
        "upper": sg.linalg.triangular_solve(w, v),
        "z": sg.linalg.triangular_solve(z, sg.zeros((2, 0, 1)), lower=True),
    }
    """)

_QR = _case("""
    tall = sg.concatenate([a, b[:, :1, :1] + a[:, :1]], axis=1)
    q, r = sg.linalg.qr(tall)
    qw, rw = sg.linalg.qr(sg.transpose(b, (0, 2, 1)))
    q1, r1 = sg.linalg.qr(o)
    return {"q": q, "r": r, "qw": qw, "rw": rw, "q1": q1, "r1": r1}
    """)

_EIGH = _case("""
    w, v = sg.linalg.eigh(a + sg.transpose(a, (0, 2, 1)))
    w1, v1 = sg.linalg.eigh(o)
    wz, vz = sg.linalg.eigh(z)
    return {"w": w, "v": v, "w1": w1, "v1": v1, "wz": wz, "vz": vz}
    """)

GENERATORS = {"inv": _INV, "solve": _SOLVE, "slogdet": _SLOGDET, "cholesky": _CHOLESKY,
              "triangular_solve": _TRIANGULAR, "qr": _QR, "eigh": _EIGH}
