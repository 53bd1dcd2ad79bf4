"""The everyday ops of issue 36 (SPEC §7): eager mode against NumPy itself (the
graphs are checked against eager mode by tests/programs/ops_everyday.py and the
op-coverage cases), and the compile errors of bad calls: each located at the call
or at the operand it names.
"""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

import stagegraph as sg  # noqa: E402

RNG = np.random.default_rng(36)


def arr(v):
    return np.asarray(v._a if isinstance(v, sg.Tensor) else v)


def same(got, want, exact=False):
    got, want = arr(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if exact or want.dtype == bool or np.issubdtype(want.dtype, np.integer):
        return np.array_equal(got, want)
    return np.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


def eager_cases():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    y = RNG.normal(size=(5,)).astype(np.float32)
    k = RNG.integers(-3, 4, size=(6,))
    c = RNG.integers(-3, 4, size=(2, 3)).astype(np.int32)
    b = RNG.random(6) < 0.5
    edges = np.sort(np.concatenate([y, [np.nan]]).astype(np.float32))
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0], np.float32)
    t = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    m = RNG.normal(size=(4, 4)).astype(np.float32)
    cases = [
        ("searchsorted left", sg.searchsorted(edges, x), np.searchsorted(edges, x)),
        ("searchsorted right with NaN", sg.searchsorted(edges, special, side="right"),
         np.searchsorted(edges, special, side="right")),
        ("searchsorted ints", sg.searchsorted(np.sort(k), k, side="right"), np.searchsorted(np.sort(k), k, side="right")),
        ("searchsorted sorter", sg.searchsorted(y, x, sorter=np.argsort(y)), np.searchsorted(y, x, sorter=np.argsort(y))),
        ("logaddexp", sg.logaddexp(x, y), np.logaddexp(x, y)),
        ("logaddexp specials", sg.logaddexp(special, special[::-1].copy()), np.logaddexp(special, special[::-1])),
        ("logaddexp equal infinities", sg.logaddexp(special, special), np.logaddexp(special, special)),
        ("cumprod", sg.cumprod(x, axis=1), np.cumprod(x, axis=1)),
        ("cumprod flat ints", sg.cumprod(c), np.cumprod(c.astype(np.int64))),
        ("cumprod bool", sg.cumprod(b), np.cumprod(b)),
        ("diff", sg.diff(x), np.diff(x)),
        ("diff n=2 axis=0", sg.diff(x, n=2, axis=0), np.diff(x, n=2, axis=0)),
        ("diff n=0", sg.diff(x, n=0), x),
        ("diff bool", sg.diff(b), np.diff(b)),
        ("diff prepend number", sg.diff(x, prepend=0.0), np.diff(x, prepend=0.0)),
        ("diff append rows", sg.diff(x, n=2, axis=0, append=x[:2]), np.diff(x, n=2, axis=0, append=x[:2])),
        ("diff prepend and append ints", sg.diff(k, prepend=k[:2], append=7), np.diff(k, prepend=k[:2], append=7)),
        ("flip all", sg.flip(x), np.flip(x)),
        ("flip tuple", sg.flip(t, (0, 2)), np.flip(t, (0, 2))),
        ("flip negative", sg.flip(t, -2), np.flip(t, -2)),
        ("roll flat", sg.roll(x, 7), np.roll(x, 7)),
        ("roll axes", sg.roll(t, (1, -5), (0, 2)), np.roll(t, (1, -5), (0, 2))),
        ("roll repeated axis", sg.roll(t, (1, 1), (1, 1)), np.roll(t, (1, 1), (1, 1))),
        ("roll by a tensor", sg.roll(t, sg.sum(sg.arange(3)), 2), np.roll(t, 3, 2)),
        ("meshgrid xy", sg.meshgrid(y, k, x[0]), np.meshgrid(y, k, x[0])),
        ("meshgrid ij", sg.meshgrid(y, k, indexing="ij"), np.meshgrid(y, k, indexing="ij")),
        ("meshgrid flattens", sg.meshgrid(x, y), np.meshgrid(x, y)),
        ("outer", sg.outer(x, y), np.outer(x, y)),
        ("outer bool", sg.outer(b, b), np.outer(b, b)),
        ("isclose", sg.isclose(x, x + 1e-6), np.isclose(x, x + 1e-6)),
        ("isclose specials", sg.isclose(special, special[::-1].copy()), np.isclose(special, special[::-1])),
        ("isclose equal_nan", sg.isclose(special, special, equal_nan=True), np.isclose(special, special, equal_nan=True)),
        ("isclose tolerances", sg.isclose(x, x * 1.01, rtol=0.02, atol=0.0), np.isclose(x, x * 1.01, rtol=0.02, atol=0.0)),
        ("isclose ints", sg.isclose(k, k + 1, atol=1), np.isclose(k, k + 1, atol=1)),
        ("allclose", sg.allclose(x, x + 1e-7), np.allclose(x, x + 1e-7)),
        ("allclose false", sg.allclose(x, y), np.allclose(x, y)),
    ]
    specs = [("ij,jk->ik", (x[:, :4], m)), ("ij,jk", (x[:, :4], m)), ("ii", (m,)), ("ii->i", (m,)), ("ij->", (x,)),
             ("ij->ji", (x,)), ("bij,jk->bik", (t, m)), ("...j,jk->...k", (t, m)), ("...ij,...jk", (t, m)),
             ("ij,ij->i", (x, x)), ("i,j", (y, y)), ("ij,kj,kl->il", (x[:, :4], m, m)), ("Ab,bA", (t[0], t[0].T.copy())),
             ("bii->b", (np.stack([m, m]),)), ("iij->j", (np.stack([m[:2, :2]] * 4, axis=-1),)), ("ij,ij->ij", (x[:, :1], x))]
    for spec, ops in specs:
        cases.append((f"einsum {spec}", sg.einsum(spec, *ops), np.einsum(spec, *ops)))
    chain = (x[:, :4], m, m, y[:4])
    for opt in (True, "greedy", "optimal", np.einsum_path("ij,jk,kl,l->i", *chain, optimize="greedy")[0]):
        cases.append((f"einsum optimize={opt!r}", sg.einsum("ij,jk,kl,l->i", *chain, optimize=opt),
                      np.einsum("ij,jk,kl,l->i", *chain, optimize=opt)))
    cases.append(("einsum ints", sg.einsum("ij,kj->ik", c, c), np.einsum("ij,kj->ik", c, c)))
    cases.append(("einsum bool", sg.einsum("i,j->ij", b, b), np.einsum("i,j->ij", b, b)))
    return cases


BAD_CALLS = [
    ("einsum rank", "sg.einsum('ij,jk->ik', a, v)", "operand 1 has rank 1 but its subscripts 'jk' name 2 axes", "v"),
    ("einsum size", "sg.einsum('ij,ij->i', a, b)", "subscript 'j' has size 4 in operand 1 but 3 in operand 0", "b"),
    ("einsum operands", "sg.einsum('ij,jk', a)", "the subscripts name 2 operands, but 1 were given", None),
    ("einsum output", "sg.einsum('ij->iz', a)", "output subscript 'z' is not among the operands' subscripts", None),
    ("einsum dots", "sg.einsum('...j->j', a)", "no '...'", None),
    ("einsum dynamic subscripts", "sg.einsum(a, a)", "a string known at compile time", None),
    ("searchsorted 2-D", "sg.searchsorted(a, v)", "searchsorted: the sorted sequence must be 1-D", None),
    ("searchsorted dtype", "sg.searchsorted(v, i)", "cast with astype", None),
    ("searchsorted side", "sg.searchsorted(v, v, side='middle')", "side must be 'left' or 'right'", None),
    ("roll float shift", "sg.roll(v, v[0])", "roll's shift must be an int or an integer scalar, not a f32", None),
    ("einsum optimize", "sg.einsum('ij->ji', a, optimize='fast')", "optimize must be False, True", None),
    ("einsum path", "sg.einsum('i,i', v, v, optimize=['einsum_path', (0, 2)])",
     "path step 1 must name two operands of the 2 left", None),
    ("diff negative n", "sg.diff(v, n=-1)", "order must be non-negative", None),
    ("flip axis", "sg.flip(a, 2)", "out of bounds", None),
    ("meshgrid indexing", "sg.meshgrid(v, v, indexing='yx')", "indexing must be 'xy' or 'ij'", None),
]


def check_bad_calls(report, work):
    for name, expr, message, operand in BAD_CALLS:
        src = ("import stagegraph as sg\n\n\n@sg.function\n"
               "def main(a: sg.f32[2, 3], b: sg.f32[2, 4], v: sg.f32[3], i: sg.i64[3]):\n"
               f"    return {expr}\n")
        py = os.path.join(work, name.replace(" ", "_") + ".py")
        with open(py, "w", encoding="utf-8") as f:
            f.write(src)
        proc = lib.run_tool("graph-compile", [py, "-o", py + ".sgraph"])
        line = f"{py}:6:"
        located = any(ln.startswith(line) and ": error:" in ln and message in ln for ln in proc.stderr.splitlines())
        if located and operand:  # the column is the operand's
            col = int(next(ln for ln in proc.stderr.splitlines() if ln.startswith(line)).split(":")[2])
            located = src.splitlines()[5][col - 1:].startswith(operand)
        report.check(f"compile error: {name}", proc.returncode == 1 and located,
                     f"exit {proc.returncode}, stderr: {proc.stderr.strip()[-300:]}")


def main():
    report = lib.Report("everyday ops")
    with np.errstate(all="ignore"):
        cases = eager_cases()
    for name, got, want in cases:
        if isinstance(want, (list, tuple)):
            ok = len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
        else:
            ok = same(got, want)
        report.check(f"eager {name}", ok, f"got {got!r}, NumPy {want!r}")
    with tempfile.TemporaryDirectory() as work:
        check_bad_calls(report, work)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
