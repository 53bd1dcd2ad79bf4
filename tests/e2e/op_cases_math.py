"""Op-coverage cases of the arithmetic ops: elementwise, where/clip/cast,
reductions, matmul and ordering (see op_cases.py)."""

import textwrap

from op_cases_base import FLOATS, INTS, KNOWN_ISSUES, Program, scalar_literal


# ---- elementwise binary -------------------------------------------------------------

_BINARY = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "div": "{a} / {b}",
    "floordiv": "{a} // {b}", "mod": "{a} % {b}", "pow": "{a} ** {b}",
    "maximum": "sg.maximum({a}, {b})", "minimum": "sg.minimum({a}, {b})",
    "less": "{a} < {b}", "less_equal": "{a} <= {b}", "greater": "{a} > {b}",
    "greater_equal": "{a} >= {b}", "equal": "{a} == {b}", "not_equal": "{a} != {b}",
    "logical_and": "sg.logical_and({a}, {b})", "logical_or": "sg.logical_or({a}, {b})",
}


def _binary(op):
    expr = _BINARY[op]

    def gen(t):
        e = lambda a, b: expr.format(a=a, b=b)  # noqa: E731
        lit = scalar_literal(t, 3)
        lines = [
            f'"ab": {e("a", "b")},',          # [N, 3] with [3]
            f'"ba": {e("b", "a")},',          # [3] with [N, 3]
            f'"cb": {e("c", "b")},',          # [N, 1] with [3]: an outer broadcast
            f'"oa": {e("o", "a")},',          # [1, 1] with [N, 3]
            f'"zb": {e("z", "b")},',          # [0, 3] with [3]
            f'"zo": {e("z", "o")},',          # [0, 3] with [1, 1]
            f'"s0": {e("a[0:1, 0]", "b[-1]")},',  # rank 1 with a 0-d
            f'"lit": {e("a", lit)},',         # a Python number beside a tensor
            f'"rlit": {e(lit, "b")},',
        ]
        options = ""
        if op in ("floordiv", "mod", "div") and t != "bool":
            # Divisors are kept off zero (integer // and % by zero is an error,
            # test_op_edge_cases.py); negated copies cover negative divisors.
            options = "range.b=1,6 range.c=1,6 range.o=1,6"
            lines = [ln for ln in lines if not ln.startswith(('"ba"', '"oa"'))]
            lines += [f'"ao": {e("a", "o")},', f'"neg": {e("a", "-b")},', f'"cneg": {e("c", "-b")},']
        if op == "pow" and t in INTS:
            options = "range.a=-6,6 range.b=0,5 range.c=0,5 range.o=0,5"
            lines = [ln for ln in lines if not ln.startswith(('"ba"', '"cb"', '"oa"', '"rlit"'))]
            lines += [f'"ca": {e("c", "b")},', f'"ao": {e("a", "o")},']
        if op == "pow" and t in FLOATS:
            options = "range.a=0.1,3 range.b=-2,2 range.c=0.1,3 range.o=0.1,3 range.z=0.1,3"
        if op in ("logical_and", "logical_or"):
            sym = "&" if op == "logical_and" else "|"
            lines += [f'"op": a {sym} b,']
            if "logical_python_bool" in KNOWN_ISSUES:
                lines = [ln for ln in lines if not ln.startswith(('"lit"', '"rlit"'))]
        body = "return {\n" + textwrap.indent("\n".join(lines), "    ") + "\n}"
        return Program(f"a: sg.{t}['N', 3], b: sg.{t}[3], c: sg.{t}['N', 1], o: sg.{t}[1, 1], "
                       f"z: sg.{t}[0, 3]", body, options)
    return gen


# ---- elementwise unary --------------------------------------------------------------

_UNARY = {
    "neg": "-{x}", "abs": "sg.abs({x})", "exp": "sg.exp({x})", "log": "sg.log({x})",
    "sqrt": "sg.sqrt({x})", "rsqrt": "sg.rsqrt({x})", "sin": "sg.sin({x})", "cos": "sg.cos({x})",
    "tanh": "sg.tanh({x})", "sigmoid": "sg.sigmoid({x})", "relu": "sg.relu({x})",
    "gelu": "sg.gelu({x})", "floor": "sg.floor({x})", "ceil": "sg.ceil({x})",
    "round": "sg.round({x})", "sign": "sg.sign({x})", "square": "sg.square({x})",
    "logical_not": "sg.logical_not({x})", "isnan": "sg.isnan({x})",
}


def _unary(op):
    expr = _UNARY[op]

    def gen(t):
        e = lambda x: expr.format(x=x)  # noqa: E731
        options = ""
        if op in ("log", "sqrt", "rsqrt"):
            options = "range.a=0.05,9 range.o=0.05,9"  # mostly in the domain; z is empty anyway
        if op in ("round", "floor", "ceil") and t in FLOATS:
            options = "scale.a=4 scale.o=4"
        if op == "exp" and t == "f16":
            options = "scale.a=2"
        lines = [f'"a": {e("a")},', f'"o": {e("o")},', f'"z": {e("z")},', f'"s": {e("a[:, -1]")},']
        if op == "logical_not":
            lines.append('"inv": ~a,')
        if op == "isnan" and t in FLOATS:
            lines.append(f'"nan": {e("sg.log(a)")},')  # log of negatives: NaN
        body = "return {\n" + textwrap.indent("\n".join(lines), "    ") + "\n}"
        return Program(f"a: sg.{t}['N', 3], o: sg.{t}[1], z: sg.{t}[0, 2]", body, options)
    return gen


# ---- where, clip, cast --------------------------------------------------------------

def _where(t):
    lit = scalar_literal(t, 5)
    return Program(
        f"c: sg.bool['N', 1], a: sg.{t}['N', 3], b: sg.{t}[3], z: sg.{t}[0, 3], zc: sg.bool[0, 1]",
        f"""
        return {{
            "cab": sg.where(c, a, b),
            "cba": sg.where(c, b, a),
            "full": sg.where(a == b, a, b),
            "lit": sg.where(c, a, {lit}),
            "z": sg.where(zc, z, b),
            "zc": sg.where(zc, b, b),
        }}
        """)


def _clip(t):
    if t == "bool":
        return None
    return Program(
        f"a: sg.{t}['N', 3], lo: sg.{t}[3], hi: sg.{t}['N', 1], z: sg.{t}[0, 3]",
        """
        return {
            "t": sg.clip(a, lo, hi),
            "lit": sg.clip(a, -2, 3),
            "lo_only": sg.clip(a, lo, None),
            "hi_only": sg.clip(a, None, hi),
            "z": sg.clip(z, lo, 1),
        }
        """)


def _cast(t):
    lines = "\n".join(f'    "to_{d}": a.astype(sg.{d}),' for d in ("f32", "f16", "i32", "i64", "bool"))
    return Program(
        f"a: sg.{t}['N', 3], z: sg.{t}[0, 2], o: sg.{t}[1]",
        "return {\n" + lines + """
    "fn": sg.astype(o, sg.i32),
    "z": sg.astype(z, sg.f32),
    "zb": z.astype(sg.bool),
}""", "scale.a=20 range.a=-20,20" if t in INTS else "scale.a=20")


# ---- reductions ---------------------------------------------------------------------

def _reduce(op):
    def gen(t):
        f = f"sg.{op}"
        # max/min of an empty axis is an error (test_op_edge_cases.py): the batch
        # axis N, which may be 0, is never reduced by them.
        empty_ok = op not in ("max", "min")
        lines = [
            f'"last": {f}(a, axis=-1),',
            f'"mid_keep": {f}(a, axis=1, keepdims=True),',
            f'"tuple": {f}(a, axis=(-2, -1)),',
            f'"o_all": {f}(o),',
            f'"o_ax0": {f}(o, axis=0),',
            f'"z_last": {f}(z, axis=-1),',
        ]
        if empty_ok:
            lines += [f'"all": {f}(a),', f'"batch": {f}(a, axis=0),', f'"z_first": {f}(z, axis=0, keepdims=True),',
                      f'"z_all": {f}(z),']
        body = "return {\n" + textwrap.indent("\n".join(lines), "    ") + "\n}"
        opts = "range.a=-3,4" if op == "prod" and t in INTS else ""
        return Program(f"a: sg.{t}['N', 3, 2], o: sg.{t}[1, 1], z: sg.{t}[0, 3]", body, opts)
    return gen


def _arg_reduce(op):
    def gen(t):
        f = f"sg.{op}"
        return Program(
            f"a: sg.{t}['N', 3, 2], o: sg.{t}[1, 1], z: sg.{t}[0, 3]",
            f"""
            return {{
                "last": {f}(a, axis=-1),
                "mid_keep": {f}(a, axis=-2, keepdims=True),
                "o_none": {f}(o),
                "o_keep": {f}(o, axis=None, keepdims=True),
                "z_last": {f}(z, axis=-1),
            }}
            """, "range.a=-2,2" if t in INTS else "")
    return gen


# ---- linear algebra -----------------------------------------------------------------

def _matmul(t):
    if t == "bool":
        return None
    return Program(
        f"a: sg.{t}['N', 3], w: sg.{t}[3, 4], v: sg.{t}[3], bx: sg.{t}[2, 'N', 3], bw: sg.{t}[1, 3, 2], "
        f"z: sg.{t}[0, 3], k0: sg.{t}[2, 0], k1: sg.{t}[0, 4]",
        """
        return {
            "aw": a @ w,
            "av": sg.matmul(a, v),
            "vw": v @ w,
            "vv": sg.dot(v, v),
            "dot_nd": sg.dot(bx, bw),
            "dot_vn": sg.dot(v, bw),
            "batch": sg.matmul(bx, bw),
            "z": z @ w,
            "inner0": k0 @ k1,
        }
        """, "range.a=-4,4 range.w=-4,4" if t in INTS else "")


# ---- ordering -----------------------------------------------------------------------

def _cumsum(t):
    return Program(
        f"a: sg.{t}['N', 3, 2], z: sg.{t}[0, 3]",
        """
        return {
            "last": sg.cumsum(a, axis=-1),
            "batch": sg.cumsum(a, axis=0),
            "mid": sg.cumsum(a, -2),
            "z": sg.cumsum(z, axis=1),
        }
        """, "range.a=-3,4" if t in INTS else "")


def _sort(op):
    def gen(t):
        f = f"sg.{op}"
        return Program(
            f"a: sg.{t}['N', 4], x: sg.{t}[2, 'N', 3], z: sg.{t}[0, 3], o: sg.{t}[1]",
            f"""
            return {{
                "last": {f}(a),
                "batch": {f}(a, axis=0),
                "neg": {f}(x, axis=-3),
                "mid": {f}(x, axis=-2),
                "z": {f}(z, axis=0),
                "o": {f}(o),
            }}
            """, "range.a=-2,2 range.x=-2,2" if t in INTS else "")
    return gen


def _topk(t):
    return Program(
        f"a: sg.{t}['N', 4], x: sg.{t}[3, 'N', 2], z: sg.{t}[0, 3]",
        """
        v, i = sg.topk(a, 2)
        v0, i0 = sg.topk(a, 0, axis=-1)
        vx, ix = sg.topk(x, 3, axis=-3)
        vn, inn = sg.topk(x, 1, axis=-1)
        vz, iz = sg.topk(z, 2)
        return {"v": v, "i": i, "v0": v0, "i0": i0, "vx": vx, "ix": ix, "vn": vn, "in": inn, "vz": vz, "iz": iz}
        """, "range.a=-2,2 range.x=-2,2" if t in INTS else "")


GENERATORS = {}
GENERATORS.update({op: _binary(op) for op in _BINARY})
GENERATORS.update({op: _unary(op) for op in _UNARY})
GENERATORS.update({op: _reduce(op) for op in ("sum", "mean", "max", "min", "prod", "any", "all")})
GENERATORS.update({op: _arg_reduce(op) for op in ("argmax", "argmin")})
GENERATORS.update({op: _sort(op) for op in ("sort", "argsort")})
GENERATORS.update({"where": _where, "clip": _clip, "cast": _cast, "matmul": _matmul, "cumsum": _cumsum,
                   "topk": _topk})


# ---- everyday ops (issue 36) ----------------------------------------------------------

def _cumprod(t):
    return Program(
        f"a: sg.{t}['N', 3, 2], z: sg.{t}[0, 3]",
        """
        return {
            "last": sg.cumprod(a, axis=-1),
            "batch": sg.cumprod(a, axis=0),
            "mid": sg.cumprod(a, -2),
            "flat": sg.cumprod(a),
            "z": sg.cumprod(z, axis=1),
        }
        """, "range.a=-3,4" if t in INTS else "")


def _searchsorted(t):
    # The sequence is sorted in the graph (NaN-free inputs; sort puts NaN last,
    # where searchsorted looks for it), so every binding searches a sorted one.
    return Program(
        f"s: sg.{t}[7], v: sg.{t}['N', 3], z: sg.{t}[0]",
        """
        edges = sg.sort(s)
        return {
            "left": sg.searchsorted(edges, v),
            "right": sg.searchsorted(edges, v, side="right"),
            "self": sg.searchsorted(edges, edges, side="right"),
            "empty": sg.searchsorted(z, v),
        }
        """, "range.s=-3,3 range.v=-4,4" if t in INTS else "")


GENERATORS.update({"cumprod": _cumprod, "searchsorted": _searchsorted})
