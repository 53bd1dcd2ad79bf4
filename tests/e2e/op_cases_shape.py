"""Op-coverage cases of the structural ops: shape ops, creation, neural-network
ops and the ops the -O2 fusion produces (see op_cases.py)."""

from op_cases_base import INTS, KNOWN_ISSUES, Program, float_only, scalar_literal


# ---- shape ops ----------------------------------------------------------------------

_ANY = "a: sg.{t}['N', 6], b: sg.{t}[3], c: sg.{t}['N', 1], o: sg.{t}[1, 1], z: sg.{t}[0, 4]"


def _shape_case(body, params=_ANY, options=""):
    def gen(t):
        return Program(params.format(t=t), body.replace("{t}", t), options)
    return gen


_RESHAPE = _shape_case("""
    return {
        "infer": sg.reshape(a, (-1, 2, 3)),
        "sym": a.reshape(a.shape[0], 3, 2),
        "flat": sg.reshape(a, (len(a) * 6,)),
        "neg": sg.reshape(a, (2, -1)),
        "scalar": sg.reshape(o, ()),
        "z": sg.reshape(z, (2, 0, 2)),
        "z_infer": sg.reshape(z, (-1, 2)),
    }
    """)

_BROADCAST_TO = _shape_case("""
    return {
        "sym": sg.broadcast_to(b, (a.shape[0], 3)),
        "col": sg.broadcast_to(c, (len(c), 4)),
        "static": sg.broadcast_to(o, (2, 3)),
        "rank_up": sg.broadcast_to(b, (2, 1, 3)),
        "empty": sg.broadcast_to(b, (0, 3)),
        "from_empty": sg.broadcast_to(z, (2, 0, 4)),
    }
    """)

_TRANSPOSE = _shape_case("""
    x = sg.reshape(a, (-1, 2, 3))
    return {
        "default": sg.transpose(a),
        "T": a.T,
        "perm": sg.transpose(x, (1, 0, 2)),
        "neg": sg.transpose(x, (-1, 0, -2)),
        "z": sg.transpose(z),
        "o": sg.transpose(o, (1, 0)),
    }
    """)

_EXPAND_DIMS = _shape_case("""
    return {
        "last": sg.expand_dims(a, -1),
        "two": sg.expand_dims(a, (0, -2)),
        "none": a[None],
        "ell": a[..., None],
        "z": sg.expand_dims(z, 1),
        "scalar": sg.expand_dims(b[0], 0),
    }
    """)

_SQUEEZE = _shape_case("""
    return {
        "neg": sg.squeeze(c, -1),
        "all": sg.squeeze(o),
        "ax": sg.squeeze(o, axis=(0, -1)),
        "z": sg.squeeze(sg.expand_dims(z, 1), 1),
    }
    """)

_CONCATENATE = _shape_case("""
    return {
        "batch": sg.concatenate([a, a], axis=0),
        "last": sg.concatenate([a, c, c], axis=-1),
        "z": sg.concatenate([z, z, a[:, 1:5]], axis=0),
        "zlast": sg.concatenate([z, sg.reshape(z, (0, 4))], axis=-1),
        "stack": sg.stack([b, b], axis=-1),
        "stack0": sg.stack([c, c]),
    }
    """)

_SLICE = _shape_case("""
    return {
        "tail": a[1:],
        "neg": a[:, -2:],
        "rev": a[::-1],
        "step": a[:, 1::2],
        "negstep": a[:, -1:0:-2],
        "idx": a[:, -1],
        "ell": a[..., 2],
        "dyn": a[:, i],
        "dynb": a[:, :i],
        "b": b[-2:],
        "z": z[:, 1:3],
        "parts": sg.split(a, 3, axis=-1)[1],
    }
    """, _ANY + ", i: sg.i64", "range.i=-3,3")

_TAKE = _shape_case("""
    return {
        "last": sg.take(a, i, axis=-1),
        "i32": sg.take(a, j, axis=1),
        "b": sg.take(b, j2),
        "scalar": sg.take(a, i[0], axis=-1),
        "z": sg.take(z, i, axis=1),
        "empty": sg.take(b, e),
    }
    """, _ANY + ", i: sg.i64[4], j: sg.i32[3], j2: sg.i32[2, 2], e: sg.i64[0]",
    "range.i=-4,4 range.j=-6,6 range.j2=-3,3")

_SHAPE_DIM = _shape_case("""
    n = a.shape[0]
    return {
        "n": n,
        "len": len(c),
        "arith": n * 2 + 1,
        "neg": sg.astype(a.shape[-2], sg.i32),
    }
    """, "a: sg.{t}['N', 6], c: sg.{t}['N', 1]")

_FULL = _shape_case("""
    return {
        "zeros": sg.zeros((len(a), 2), dtype=sg.{t}),
        "ones": sg.ones((a.shape[0],), dtype=sg.{t}),
        "full": sg.full((len(a), 3), v, dtype=sg.{t}),
        "default_dtype": sg.full((len(a), 2), v),
        "zeros_like": sg.zeros_like(a),
        "ones_like": sg.ones_like(c),
        "full_like": sg.full_like(c, v),
        "empty": sg.full((len(a), 0), v, dtype=sg.{t}),
    }
    """, "a: sg.{t}['N', 6], c: sg.{t}['N', 1], v: sg.{t}")

_TILE = _shape_case("""
    return {
        "rows": sg.tile(a, (2, 1)),
        "int": sg.tile(b, 3),
        "rank_up": sg.tile(o, (2, 1, 3)),
        "zero_reps": sg.tile(a, (1, 0)),
        "z": sg.tile(z, (3, 2)),
    }
    """)


def _pad(t):
    fill = {"bool": "True", "f32": "-1.5", "f16": "-1.5"}.get(t, "7")
    default = ", constant_values=False" if t == "bool" and "pad_bool_default" in KNOWN_ISSUES else ""
    return Program(
        _ANY.format(t=t),
        f"""
        return {{
            "pairs": sg.pad(a, ((1, 0), (2, 1)){default}),
            "value": sg.pad(a, ((0, 2), (0, 0)), constant_values={fill}),
            "one": sg.pad(b, 1{default}),
            "z": sg.pad(z, ((1, 1), (0, 1)){default}),
            "o": sg.pad(o, ((0, 0), (3, 0)), constant_values={fill}),
        }}
        """)


def _slice_update(t):
    lit = scalar_literal(t, 4)
    return Program(
        _ANY.format(t=t) + ", v: sg.{t}[2], i: sg.i64".format(t=t),
        f"""
        y = a
        y[:, 0] = b[0]
        y[:, -2:] = c
        y[:, 1:3] = v
        w = z
        w[:, 1] = {lit}
        u = b
        u[i] = b[0]
        u[-1:] = o[0]
        return {{"y": y, "w": w, "u": u}}
        """, "range.i=-3,3")


# ---- creation -----------------------------------------------------------------------

def _eye(t):
    k = ("", "") if "eye_k" in KNOWN_ISSUES else (", k=1", ", k=-2")
    return Program(
        f"a: sg.{t}['N', 3]",
        f"""
        return {{
            "sq": sg.eye(3, dtype=sg.{t}),
            "rect": sg.eye(2, 4{k[0]}, dtype=sg.{t}),
            "below": sg.eye(4, 3{k[1]}, dtype=sg.{t}),
            "empty": sg.eye(0, dtype=sg.{t}),
            "used": a == sg.eye(1, 3, dtype=sg.{t}),
        }}
        """)


def _arange(t):
    if t == "bool":
        return None
    static = f"""
        "range": sg.arange(2, 9, 3, dtype=sg.{t}),
        "stop": sg.arange(5, dtype=sg.{t}),
        "down": sg.arange(4, -2, -2, dtype=sg.{t}),
        "empty": sg.arange(3, 1, dtype=sg.{t}),
    """ if t in INTS else f"""
        "range": sg.arange(0.5, 3.0, 0.5, dtype=sg.{t}),
        "down": sg.arange(1.0, -1.0, -0.75, dtype=sg.{t}),
        "empty": sg.arange(1.0, 0.0, dtype=sg.{t}),
    """
    if "arange_staged" in KNOWN_ISSUES:
        body = "return {" + static + f'    "used": x + sg.arange(3, dtype=sg.{t}),\n}}'
        return Program(f"x: sg.{t}['N', 3]", body, ops=set())
    staged = """
        "len": sg.arange(len(x)),
        "len1": sg.arange(len(x) + 1),
        "staged": sg.arange(n),
        "span": sg.arange(m, n),
        "back": sg.arange(n, m, -1),
        "step": sg.arange(m, n + 5, 2),
    """ if t in INTS else f"""
        "len": sg.arange(len(x), dtype=sg.{t}),
        "shifted": sg.arange(len(x), dtype=sg.{t}) * 2 + x[:, 0],
    """
    params = f"x: sg.{t}['N', 3]" + (f", n: sg.{t}, m: sg.{t}" if t in INTS else "")
    return Program(params, "return {" + static + staged + "}", "range.n=-2,6 range.m=-3,3")


def _one_hot(t):
    return Program(
        f"i: sg.{t}['N', 2], j: sg.{t}[3], z: sg.{t}[0]",
        """
        return {
            "f32": sg.one_hot(i, 4),
            "i64": sg.one_hot(j, 5, dtype=sg.i64),
            "bool": sg.one_hot(i, 3, dtype=sg.bool),
            "f16": sg.one_hot(j, 2, dtype=sg.f16),
            "i32": sg.one_hot(j, 3, dtype=sg.i32),
            "depth0": sg.one_hot(j, 0),
            "z": sg.one_hot(z, 3),
        }
        """, "range.i=-2,6 range.j=-1,5", ops=set() if "one_hot_decomposed" in KNOWN_ISSUES else None)


def _random(t):
    # The key is the op's only tensor operand: an i64[2] (sg.random.key).
    if t != "i64":
        return None
    return Program(
        "seed: sg.i64, a: sg.f32['N', 3]",
        """
        key = sg.random.key(seed)
        return {
            "key": key,
            "uniform": sg.random.uniform(key, a.shape),
            "normal": sg.random.normal(key, (len(a), 2)),
            "keys": sg.random.split(key, 3),
            "bits": sg.random.bits(key, (4,)),
            "categorical": sg.random.categorical(key, a),
            "bernoulli": sg.random.bernoulli(key, sg.sigmoid(a)),
            "empty": sg.random.normal(key, (0, 2)),
        }
        """, "range.seed=-100000,100000")


# ---- neural-network ops -------------------------------------------------------------

def _softmax(op):
    @float_only
    def gen(t):
        f = f"sg.{op}"
        return Program(
            f"a: sg.{t}['N', 3, 2], z: sg.{t}[0, 3]",
            f"""
            return {{
                "last": {f}(a),
                "mid": {f}(a, axis=-2),
                "batch": {f}(a, axis=0),
                "axes": {f}(a, axis=(1, 2)),
                "outer": {f}(a, axis=(0, -1)),
                "one": {f}(a, axis=(1,)),
                "z": {f}(z, axis=-1),
            }}
            """, "scale.a=3")
    return gen


@float_only
def _conv2d(t):
    return Program(
        f"x: sg.{t}['N', 5, 5, 2], w: sg.{t}[3, 3, 2, 4], wg: sg.{t}[2, 2, 1, 4], w1: sg.{t}[1, 1, 2, 1]",
        """
        return {
            "valid": sg.conv2d(x, w),
            "same_s2": sg.conv2d(x, w, stride=2, padding="SAME"),
            "dil": sg.conv2d(x, w, dilation=2),
            "groups": sg.conv2d(x, wg, groups=2, padding="SAME"),
            "strided": sg.conv2d(x, wg, stride=(2, 1), groups=2),
            "pointwise": sg.conv2d(x, w1),
        }
        """)


def _pool(op):
    @float_only
    def gen(t):
        f = f"sg.{op}"
        return Program(
            f"x: sg.{t}['N', 5, 4, 2], o: sg.{t}[1, 1, 1, 3]",
            f"""
            return {{
                "valid": {f}(x, 2),
                "same": {f}(x, 3, stride=2, padding="SAME"),
                "rect": {f}(x, (2, 1), stride=(1, 2)),
                "same_all": {f}(x, (5, 4), padding="SAME"),
                "o": {f}(o, 1),
                "o_same": {f}(o, 2, padding="SAME"),
            }}
            """)
    return gen


@float_only
def _layer_norm(t):
    return Program(
        f"a: sg.{t}['N', 3, 4], g: sg.{t}[4], b: sg.{t}[4], g1: sg.{t}[1], s: sg.{t}, z: sg.{t}[0, 4]",
        """
        return {
            "vec": sg.layer_norm(a, g, b),
            "eps": sg.layer_norm(a, g1, s, eps=1e-2),
            "z": sg.layer_norm(z, g, b),
        }
        """, "scale.a=3", ops=set() if "layer_norm_decomposed" in KNOWN_ISSUES else None)


# ---- fused by -O2 (f32): reached through the patterns the fusion pass rewrites ------

def _fully_connected(t):
    if t != "f32":
        return None
    return Program(
        f"x: sg.{t}['N', 3], w: sg.{t}[3, 4], b: sg.{t}[4], z: sg.{t}[0, 3]",
        """
        return {
            "relu": sg.relu(x @ w + b),
            "plain": x @ w + b,
            "z": sg.relu(z @ w + b),
        }
        """, ops={"fully_connected"})


def _conv2d_bias(t):
    if t != "f32":
        return None
    return Program(
        f"x: sg.{t}['N', 5, 5, 2], w: sg.{t}[3, 3, 2, 4], b: sg.{t}[4]",
        """
        return {
            "relu": sg.relu(sg.conv2d(x, w) + b),
            "same": sg.conv2d(x, w, stride=2, padding="SAME") + b,
        }
        """, ops={"conv2d_bias"})


def _elementwise_chain(t):
    if t != "f32":
        return None
    return Program(
        f"x: sg.{t}['N', 3], y: sg.{t}['N', 3], s: sg.{t}, z: sg.{t}[0, 3]",
        """
        return {
            "tree": sg.relu(sg.tanh(x * s + y) - x * y),
            "gelu": sg.minimum(sg.gelu(x / 2.0), y) * 3.0,
            "z": sg.tanh(z * s + z),
        }
        """, ops={"elementwise_chain"})


def _scatter_add(t):
    """Reached as take's gradient (f32 only), repeated indices accumulating."""
    if t != "f32":
        return None
    return Program(
        f"x: sg.{t}[4, 3], w: sg.{t}[5, 3], z: sg.{t}[0, 3]",
        """
        idx = sg.arange(5) % 3
        return {
            "g": sg.grad(lambda v: sg.sum(sg.take(v, idx, axis=0) * w))(x),
            "g1": sg.grad(lambda v: sg.sum(sg.take(v, sg.arange(2), axis=1) * w[:4, :2]))(x),
        }
        """, ops={"scatter_add"})


GENERATORS = {op: _pool(op) for op in ("max_pool2d", "avg_pool2d")}
GENERATORS.update({
    "reshape": _RESHAPE, "broadcast_to": _BROADCAST_TO, "transpose": _TRANSPOSE,
    "expand_dims": _EXPAND_DIMS, "squeeze": _SQUEEZE, "concatenate": _CONCATENATE,
    "slice": _SLICE, "take": _TAKE, "shape_dim": _SHAPE_DIM, "full": _FULL, "tile": _TILE, "pad": _pad,
    "slice_update": _slice_update, "eye": _eye, "arange": _arange, "one_hot": _one_hot,
    "softmax": _softmax("softmax"), "log_softmax": _softmax("log_softmax"), "conv2d": _conv2d, "layer_norm": _layer_norm,
    "fully_connected": _fully_connected, "conv2d_bias": _conv2d_bias, "elementwise_chain": _elementwise_chain,
    "random": _random, "scatter_add": _scatter_add,
})
