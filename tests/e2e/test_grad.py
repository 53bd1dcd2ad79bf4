"""End to end: reverse-mode differentiation (SPEC §11), compiled and eager.

1. Every differentiable op's VJP: a program computing sg.grad of
   sum(sin(OP(inputs))) is compiled, run by graph-run, and compared with central
   finite differences of the same loss run in eager mode (the program's own
   eager run, on NumPy). Where the eager module has sg.grad, its gradient is
   compared too.
2. Control flow: gradients through a While whose trip count the data decides
   (with break), an If, recursion, nested loops, a list appended in a loop and
   stacked, sg.checkpoint, sg.vjp and has_aux, against finite differences.
3. Every program in tests/programs with a float input and a float result: the
   gradient of sum(sin(result)) with respect to its float inputs, compiled,
   against finite differences of its eager run. Programs whose ops have no
   gradient yet are refused with a located message that names the op; the test
   checks that message.
4. Refusals: sg.grad of a non-scalar result, with respect to an integer input.
"""

import ast
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402
import grad_recursion  # noqa: E402

import stagegraph as sg  # noqa: E402

EPS = 1e-2
HEADER = "import stagegraph as sg\n\n"


# ---- cases: (name, params {name: (shape, kind)}, expression) ----------------------
# kind: "n" normal, "p" positive in [0.5, 2), "a" normal kept 0.1 away from 0.
def P(*shape, kind="n"):
    return (shape, kind)


OP_CASES = [
    ("add_broadcast", {"x": P(3, 4), "y": P(4)}, "x + y"),
    ("sub_broadcast", {"x": P(3, 1), "y": P(4)}, "x - y"),
    ("mul", {"x": P(3, 4), "y": P(3, 4)}, "x * y"),
    ("div", {"x": P(3, 4), "y": P(4, kind="p")}, "x / y"),
    ("pow", {"x": P(3, kind="p"), "y": P(3)}, "x ** y"),
    ("pow_const", {"x": P(5)}, "x ** 3"),
    ("maximum", {"x": P(6, kind="a"), "y": P(6, kind="a")}, "sg.maximum(x, y + 0.05)"),
    ("minimum", {"x": P(6, kind="a"), "y": P(6, kind="a")}, "sg.minimum(x, y + 0.05)"),
    ("neg", {"x": P(4)}, "-x"),
    ("abs", {"x": P(6, kind="a")}, "sg.abs(x)"),
    ("exp", {"x": P(4)}, "sg.exp(x)"),
    ("log", {"x": P(4, kind="p")}, "sg.log(x)"),
    ("sqrt", {"x": P(4, kind="p")}, "sg.sqrt(x)"),
    ("rsqrt", {"x": P(4, kind="p")}, "sg.rsqrt(x)"),
    ("sin_cos", {"x": P(4)}, "sg.cos(x) * 2.0"),
    ("tanh", {"x": P(4)}, "sg.tanh(x)"),
    ("sigmoid", {"x": P(4)}, "sg.sigmoid(x)"),
    ("relu", {"x": P(6, kind="a")}, "sg.relu(x)"),
    ("gelu", {"x": P(6)}, "sg.gelu(x)"),
    ("square", {"x": P(4)}, "sg.square(x)"),
    ("where", {"x": P(6, kind="a"), "y": P(6)}, "sg.where(x > 0, x, y * 2.0)"),
    ("clip", {"x": P(8, kind="a")}, "sg.clip(x, -0.55, 0.65)"),
    ("sum_axis", {"x": P(3, 4)}, "sg.sum(x, axis=1)"),
    ("mean_keepdims", {"x": P(3, 4)}, "x - sg.mean(x, axis=0, keepdims=True)"),
    ("max_axis", {"x": P(3, 5, kind="s")}, "sg.max(x, axis=1)"),
    ("min_all", {"x": P(3, 5, kind="s")}, "sg.min(x)"),
    ("prod_axis", {"x": P(3, 3, kind="p")}, "sg.prod(x, axis=0)"),
    ("matmul", {"x": P(3, 4), "y": P(4, 5)}, "x @ y"),
    ("matmul_batched", {"x": P(2, 3, 4), "y": P(4, 5)}, "sg.matmul(x, y)"),
    ("matmul_vec_mat", {"x": P(4), "y": P(4, 5)}, "x @ y"),
    ("matmul_mat_vec", {"x": P(3, 4), "y": P(4)}, "x @ y"),
    ("dot_vec", {"x": P(4), "y": P(4)}, "sg.dot(x, y)"),
    ("reshape", {"x": P(3, 4)}, "sg.reshape(x, (2, 6)) * sg.arange(6, dtype=sg.f32)"),
    ("broadcast_to", {"x": P(1, 4)}, "sg.broadcast_to(x, (3, 4)) * sg.reshape(sg.arange(12, dtype=sg.f32), (3, 4))"),
    ("transpose", {"x": P(2, 3, 4)}, "sg.transpose(x, (2, 0, 1)) * sg.reshape(sg.arange(24, dtype=sg.f32), (4, 2, 3))"),
    ("expand_squeeze", {"x": P(3, 1)}, "sg.expand_dims(sg.squeeze(x, 1), 0) * sg.arange(3, dtype=sg.f32)"),
    ("concatenate", {"x": P(2, 3), "y": P(2, 2)}, "sg.concatenate([x, y * 3.0], axis=1)"),
    ("stack", {"x": P(3), "y": P(3)}, "sg.stack([x, y * y])"),
    ("slice", {"x": P(5, 4)}, "x[1:4, ::2]"),
    ("index_none", {"x": P(3, 4)}, "x[..., None] * x[:, 1:2, None]"),
    ("take_repeats", {"x": P(5, 3)}, "sg.take(x, sg.arange(6) % 3, axis=0)"),
    ("take_axis1", {"x": P(2, 5)}, "sg.take(x, sg.arange(4) + 1, axis=1)"),
    ("index_tensor", {"x": P(5, 3)}, "x[sg.arange(6) % 4 - 2] * x[1, sg.arange(3) % 2]"),
    ("index_mask", {"x": P(4, 3, kind="a")}, "sg.sum(x[x > 0.0] * 3.0) + x[x[:, 1] > 0.0]"),
    ("compress", {"x": P(3, 4)}, "sg.compress(sg.arange(4) % 3 == 0, x, axis=1)"),
    ("softmax", {"x": P(3, 4)}, "sg.softmax(x, axis=-1) * sg.arange(4, dtype=sg.f32)"),
    ("log_softmax", {"x": P(3, 4)}, "sg.log_softmax(x, axis=0)"),
    ("layer_norm", {"x": P(3, 5), "g": P(5), "b": P(5)}, "sg.layer_norm(x, g, b)"),
    ("cumsum", {"x": P(2, 4)}, "sg.cumsum(x, axis=1)"),
    ("sort", {"x": P(2, 5, kind="s")}, "sg.sort(x) * sg.arange(5, dtype=sg.f32)"),
    ("topk", {"x": P(2, 6, kind="s")}, "sg.topk(x, 3)[0] * sg.arange(3, dtype=sg.f32)"),
    ("tile", {"x": P(2, 3)}, "sg.tile(x, (2, 1)) * sg.reshape(sg.arange(12, dtype=sg.f32), (4, 3))"),
    ("pad", {"x": P(2, 3)}, "sg.pad(x, ((1, 0), (0, 2))) * sg.reshape(sg.arange(15, dtype=sg.f32), (3, 5))"),
    ("logsumexp", {"x": P(3, 4)}, "sg.logsumexp(x, axis=1)"),
    ("conv2d_valid", {"x": P(1, 5, 4, 2), "w": P(2, 2, 2, 3)}, "sg.conv2d(x, w)"),
    ("conv2d_same_strided", {"x": P(2, 5, 5, 1), "w": P(3, 3, 1, 2)}, "sg.conv2d(x, w, stride=2, padding='SAME')"),
    ("conv2d_dilated", {"x": P(1, 6, 5, 2), "w": P(2, 2, 2, 2)}, "sg.conv2d(x, w, dilation=2, padding='SAME')"),
    ("max_pool2d", {"x": P(1, 4, 5, 2, kind="s")}, "sg.max_pool2d(x, 2, stride=1)"),
    ("max_pool2d_same", {"x": P(2, 5, 5, 1, kind="s")}, "sg.max_pool2d(x, 3, stride=2, padding='SAME')"),
    ("avg_pool2d_same", {"x": P(1, 5, 4, 2)}, "sg.avg_pool2d(x, 3, stride=2, padding='SAME')"),
    ("cumprod", {"x": P(2, 4, kind="a")}, "sg.cumprod(x, axis=1)"),
    ("cumprod_zeros", {"x": P(3, 4, kind="a")}, "sg.cumprod(x * sg.reshape(sg.arange(12) % 5 != 1, (3, 4)).astype(sg.f32), 1)"),
    ("cumprod_flat", {"x": P(2, 3, kind="p")}, "sg.cumprod(x)"),
    ("flip", {"x": P(2, 4)}, "sg.flip(x, 1) * sg.arange(4, dtype=sg.f32)"),
    ("roll", {"x": P(2, 5)}, "sg.roll(x, (1, -2), (0, 1)) * sg.arange(5, dtype=sg.f32)"),
    ("diff", {"x": P(2, 5)}, "sg.diff(x, n=2) * sg.diff(x, axis=0)[:, 1:4]"),
    ("logaddexp", {"x": P(3, 4), "y": P(4)}, "sg.logaddexp(x, y * 2.0)"),
    ("outer", {"x": P(3), "y": P(4)}, "sg.outer(x, y * y)"),
    ("meshgrid", {"x": P(3), "y": P(2)}, "sg.meshgrid(x, y)[0] * sg.meshgrid(x, y * y, indexing='ij')[1].T"),
    ("einsum_matmul", {"x": P(3, 4), "y": P(4, 2)}, "sg.einsum('ij,jk->ki', x, y)"),
    ("einsum_trace_diag", {"x": P(3, 3)}, "sg.einsum('ii->i', x) * sg.einsum('ii', x * x)"),
    ("einsum_batch_dots", {"x": P(2, 3, 4), "y": P(4, 2)}, "sg.einsum('bij,jk,bik->bi', x, y, x[:, :, :2]) * sg.einsum('...j,jk->...k', x, y)[..., 0]"),
    # sg.linalg (made well conditioned by a multiple of the identity)
    ("linalg_inv", {"x": P(3, 3)}, "sg.linalg.inv(x + 4.0 * sg.eye(3))"),
    ("linalg_solve", {"x": P(3, 3), "y": P(3, 2)}, "sg.linalg.solve(x + 4.0 * sg.eye(3), y)"),
    ("linalg_solve_vec_batch", {"x": P(2, 3, 3), "y": P(3)}, "sg.linalg.solve(x + 4.0 * sg.eye(3), y)"),
    ("linalg_det", {"x": P(3, 3)}, "sg.linalg.det(x + 2.0 * sg.eye(3)) * 0.1"),
    ("linalg_slogdet", {"x": P(2, 3, 3)}, "sg.linalg.slogdet(x + 4.0 * sg.eye(3))[1]"),
    ("linalg_triangular_lower", {"x": P(3, 3), "y": P(3, 2)},
     "sg.linalg.triangular_solve(x + 4.0 * sg.eye(3), y, lower=True)"),
    ("linalg_triangular_upper", {"x": P(2, 3, 3), "y": P(2, 3, 1)},
     "sg.linalg.triangular_solve(x + 4.0 * sg.eye(3), y)"),
    ("linalg_cholesky", {"x": P(3, 3)}, "sg.linalg.cholesky(x @ x.T + 3.0 * sg.eye(3))"),
    ("linalg_norm", {"x": P(3, 4)}, "sg.linalg.norm(x, axis=1)"),
    ("linalg_norm_fro", {"x": P(3, 4)}, "sg.linalg.norm(x) + sg.linalg.norm(x, ord=1, axis=0)"),
]

# x * stop_gradient(x): the second factor is a constant to the gradient, which
# finite differences cannot see; the expected gradient is written out.
STOP_GRADIENT = ("stop_gradient", {"x": P(4)}, "x * sg.stop_gradient(x)",
                 lambda x: np.cos(x.astype(np.float64) ** 2) * x)
# A round trip through f16 is too coarse for finite differences at EPS.
F16_CAST = ("astype_roundtrip", {"x": P(4)}, "x.astype(sg.f16).astype(sg.f32) * 1.5",
            lambda x: 1.5 * np.cos(1.5 * x.astype(np.float64)))
EXPECTED = {c[0]: c[3] for c in (STOP_GRADIENT, F16_CAST)}

# Scalar losses used as they are (no sin around them).
LOSS_CASES = [
    ("cross_entropy", {"z": P(4, 3)}, "sg.nn.cross_entropy(z * 3.0, sg.arange(4) % 3)"),
    ("cross_entropy_soft", {"z": P(4, 3), "t": P(4, 3, kind="p")}, "sg.nn.cross_entropy(z, t / sg.sum(t, axis=1, keepdims=True))"),
    ("bce_logits", {"z": P(5), "t": P(5, kind="p")}, "sg.nn.binary_cross_entropy_with_logits(z * 2.0, t / 2.0)"),
    ("mse", {"z": P(5), "t": P(5)}, "sg.nn.mse(z, t)"),
    ("l1", {"z": P(5, kind="a"), "t": P(5, kind="a")}, "sg.nn.l1(z, t * 0.1)"),
]

# Control flow: a full program whose entry `g` returns sg.grad of `loss` w.r.t.
# its first argument; `loss` is run eagerly for the finite differences.
FLOW_CASES = {
    "index_assign": ("""
def loss(x, v):
    y = x * 1.0
    y[sg.arange(2) * 2 - 2] = v * 3.0     # rows -2 and 0 overwritten
    z = x * 1.0
    z[x > 0.0] = z[x > 0.0] * v[0, 0]     # one value per selected element
    w = x * 1.0
    w[x[:, 0] > 0.0] = v[1]               # a row broadcast into the selected rows
    return sg.sum(sg.sin(y * x + z + w))


@sg.function
def g(x: sg.f32[4, 3], v: sg.f32[2, 3]):
    return sg.grad(loss)(x, v)
""", {"x": P(4, 3, kind="a"), "v": P(2, 3)}, {}),
    "while_break": ("""
def loss(w, xs, n):
    h = sg.zeros((4,))
    i = 0
    while i < n:
        h = sg.tanh(xs[i] @ w + h)
        if sg.sum(h) > 1.5:
            break
        i += 1
    return sg.sum(h * h)


@sg.function
def g(w: sg.f32[3, 4], xs: sg.f32["T", 3], n: sg.i64):
    return sg.grad(loss)(w, xs, n)
""", {"w": P(3, 4), "xs": P(6, 3)}, {"n": [0, 1, 4, 6]}),
    "for_range_nested": ("""
def loss(w, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        h = xs[t]
        for k in range(2):
            h = sg.sin(h @ w)
        total = total + sg.sum(h)
    return total


@sg.function
def g(w: sg.f32[3, 3], xs: sg.f32["T", 3]):
    return sg.grad(loss)(w, xs)
""", {"w": P(3, 3), "xs": P(5, 3)}, {}),
    "staged_if": ("""
def loss(w, x):
    y = x @ w
    if sg.sum(y) > 0.0:
        z = sg.tanh(y) * 2.0
    else:
        z = y * y
    return sg.sum(z)


@sg.function
def g(w: sg.f32[3, 2], x: sg.f32[4, 3]):
    return sg.grad(loss)(w, x)
""", {"w": P(3, 2), "x": P(4, 3)}, {}),
    "list_append_stack": ("""
def loss(w, xs):
    hs = []
    h = sg.zeros((3,))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ w + h)
        hs.append(h)
    return sg.sum(sg.stack(hs) * 0.5)


@sg.function
def g(w: sg.f32[2, 3], xs: sg.f32["T", 2]):
    return sg.grad(loss)(w, xs)
""", {"w": P(2, 3), "xs": P(4, 2)}, {}),
    "recursion": ("""
def depth_sum(x, w, n):
    if n <= 0:
        return sg.sum(sg.tanh(x))
    return depth_sum(sg.tanh(x @ w), w, n - 1) + sg.sum(x) * 0.1


def loss(w, x, n):
    return depth_sum(x, w, n)


@sg.function
def g(w: sg.f32[3, 3], x: sg.f32[3], n: sg.i64):
    return sg.grad(loss)(w, x, n)
""", {"w": P(3, 3), "x": P(3)}, {"n": [0, 3]}),
    "checkpoint_loop": ("""
def step(h, x, w):
    return sg.tanh(x @ w + h)


def loss(w, xs):
    h = sg.zeros((3,))
    for t in range(xs.shape[0]):
        h = sg.checkpoint(step)(h, xs[t], w)
    return sg.sum(h)


@sg.function
def g(w: sg.f32[2, 3], xs: sg.f32["T", 2]):
    return sg.grad(loss)(w, xs)
""", {"w": P(2, 3), "xs": P(5, 2)}, {}),
    "checkpoint_segment": ("""
def step(h, x, w):
    return sg.tanh(x @ w + h)


def loss(w, xs):
    h = sg.zeros((3,))
    cell = sg.checkpoint(step, segment=3)
    for t in range(xs.shape[0]):
        h = cell(h, xs[t], w)
    return sg.sum(h * h)


@sg.function
def g(w: sg.f32[2, 3], xs: sg.f32["T", 2]):
    return sg.grad(loss)(w, xs)
""", {"w": P(2, 3), "xs": P(7, 2)}, {}),
    "checkpoint_while_break": ("""
def step(h, x, w):
    return sg.tanh(x @ w + h)


def loss(w, xs, n):
    h = sg.zeros((3,))
    t = 0
    while t < n:
        h = sg.checkpoint(step)(h, xs[t], w)
        if sg.sum(h) > 1.5:
            break
        t = t + 1
    return sg.sum(h * h)


@sg.function
def g(w: sg.f32[2, 3], xs: sg.f32["T", 2], n: sg.i64):
    return sg.grad(loss)(w, xs, n)
""", {"w": P(2, 3), "xs": P(12, 2)}, {"n": [0, 1, 5, 12]}),
    "structure_and_aux": ("""
def loss(p, x):
    h = sg.tanh(x @ p["w"] + p["b"])
    return sg.sum(h * h), sg.max(h)


def total(w, b, x):
    (value, aux), grads = sg.value_and_grad(loss, has_aux=True)({"w": w, "b": b}, x)
    return value


@sg.function
def g(w: sg.f32[3, 2], b: sg.f32[2], x: sg.f32[4, 3]):
    (value, aux), grads = sg.value_and_grad(loss, has_aux=True)({"w": w, "b": b}, x)
    return grads["w"]
""", {"w": P(3, 2), "b": P(2), "x": P(4, 3)}, {}),
    "vjp_pullback": ("""
def f(w, x):
    return sg.tanh(x @ w)


def loss(w, x):
    return sg.sum(f(w, x) * sg.reshape(sg.arange(8, dtype=sg.f32), (4, 2)))


@sg.function
def g(w: sg.f32[3, 2], x: sg.f32[4, 3]):
    out, pullback = sg.vjp(f, w, x)
    gw, gx = pullback(sg.reshape(sg.arange(8, dtype=sg.f32), (4, 2)))
    return gw
""", {"w": P(3, 2), "x": P(4, 3)}, {}),
}


# ---- helpers -----------------------------------------------------------------------

def draw(rng, shape, kind):
    if kind == "p":
        return rng.uniform(0.5, 2.0, size=shape).astype(np.float32)
    if kind == "s":  # values at least 0.1 apart: an ordering that small steps keep
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.1 - n * 0.05 + rng.uniform(-0.02, 0.02, n)).reshape(shape).astype(np.float32)
    x = rng.standard_normal(size=shape).astype(np.float32)
    if kind == "a":
        x = np.where(np.abs(x) < 0.1, np.sign(x + 1e-9) * 0.1 + x, x).astype(np.float32)
    return x


def as_array(v):
    return np.asarray(getattr(v, "_a", v))


def finite_difference(loss, inputs, name, wrap=True, eps=EPS):
    """Central differences of the eager loss with respect to inputs[name]. A plain
    function gets eager tensors (`wrap`), as an @sg.function's body does."""
    if wrap:
        inner = loss

        def loss(**kw):
            return inner(**{k: sg.Tensor(v) for k, v in kw.items()})
    x = inputs[name]
    g = np.zeros(x.shape, dtype=np.float64)
    for i in np.ndindex(x.shape):
        plus = dict(inputs)
        minus = dict(inputs)
        plus[name] = x.copy()
        plus[name][i] += eps
        minus[name] = x.copy()
        minus[name][i] -= eps
        g[i] = (float(as_array(loss(**plus))) - float(as_array(loss(**minus)))) / (2 * eps)
    return g


def close(actual, expected):
    """None when the gradient agrees with finite differences, else why not."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        return f"shape {a.shape}, expected {e.shape}"
    if not np.all(np.isfinite(a)):
        return f"non-finite gradient {a}"
    if a.size == 0:
        return None
    tol = 2e-2 * max(1.0, float(np.max(np.abs(e))))
    err = float(np.max(np.abs(a - e))) if a.size else 0.0
    return None if err <= tol else f"max error {err:.3g} > {tol:.3g}:\n  got      {a.ravel()[:8]}\n  expected {e.ravel()[:8]}"


def annotation(shape):
    return "sg.f32[" + ", ".join(str(d) for d in shape) + "]" if shape else "sg.f32[()]"


def op_program(params, expr, scalar_loss):
    names = list(params)
    body = expr if scalar_loss else f"sg.sum(sg.sin({expr}))"
    args = ", ".join(names)
    sig = ", ".join(f"{n}: {annotation(params[n][0])}" for n in names)
    return (HEADER + f"def loss({args}):\n    return {body}\n\n\n"
            f"@sg.function\ndef g({sig}):\n    return sg.grad(loss, argnums={tuple(range(len(names)))!r})({args})\n")


def compile_and_run(report, name, source, inputs, work):
    py = os.path.join(work, f"{name}.py")
    with open(py, "w") as f:
        f.write(source)
    graph = os.path.join(work, f"{name}.sgraph")
    try:
        lib.compile_program(py, graph)
    except lib.E2EError as e:
        report.fail(name, str(e))
        return None, None
    proc, out_dir = lib.run_graph(graph, "g", inputs, os.path.join(work, name))
    if proc.returncode != 0:
        report.fail(name, f"graph-run {lib.describe_result(proc)}")
        return None, None
    outs = {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir) if f.endswith(".npy")}
    return outs, lib.load_eager_module(py)


class Report:
    def __init__(self):
        self.failures = []
        self.passed = 0

    def check(self, name, ok, message=""):
        if ok:
            self.passed += 1
        else:
            self.fail(name, message)

    def fail(self, name, message):
        self.failures.append(f"{name}: {message}")
        print(f"FAIL {name}: {message}", flush=True)


def eager_grad_check(report, name, module, inputs, names, fd):
    """The eager module's own sg.grad, where it has one, against the same differences."""
    if not hasattr(sg, "grad"):
        return
    try:
        g = sg.grad(module.loss, argnums=tuple(range(len(names))))(*[inputs[n] for n in names])
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        report.fail(f"{name} eager", f"{type(e).__name__}: {e}")
        return
    for k, n in enumerate(names):
        why = close(as_array(g[k]), fd[n])
        report.check(f"{name} eager d/d{n}", why is None, why)


def check_op_cases(report, work):
    rng = np.random.default_rng(11)
    for cases, scalar in ((OP_CASES + [STOP_GRADIENT[:3], F16_CAST[:3]], False), (LOSS_CASES, True)):
        for name, params, expr in cases:
            inputs = {n: draw(rng, shape, kind) for n, (shape, kind) in params.items()}
            outs, module = compile_and_run(report, name, op_program(params, expr, scalar), inputs, work)
            if outs is None:
                continue
            names = list(params)
            fd = {n: finite_difference(module.loss, inputs, n) for n in names}
            if name in EXPECTED:
                fd = {"x": EXPECTED[name](inputs["x"])}
            for k, n in enumerate(names):
                got = outs.get(f"output_{k}")
                why = "missing output" if got is None else close(got, fd[n])
                report.check(f"{name} d/d{n}", why is None, why)
            eager_grad_check(report, name, module, inputs, names, fd)


def check_flow_cases(report, work):
    rng = np.random.default_rng(12)
    for name, (body, params, ints) in FLOW_CASES.items():
        floats = {n: draw(rng, shape, kind) for n, (shape, kind) in params.items()}
        variants = [dict()] if not ints else [
            {k: np.array(v[i], dtype=np.int64) for k, v in ints.items()} for i in range(len(next(iter(ints.values()))))]
        for variant in variants:
            inputs = dict(floats, **variant)
            label = name + "".join(f" {k}={int(v)}" for k, v in variant.items())
            outs, module = compile_and_run(report, name, HEADER + body, inputs, work)
            if outs is None:
                break
            first = next(iter(params))
            loss_inputs = {k: v for k, v in inputs.items()}
            loss = module.loss
            if name == "structure_and_aux":
                fd = finite_difference(lambda w, b, x: module.loss({"w": w, "b": b}, x)[0], loss_inputs, first)
            else:
                fd = finite_difference(loss, loss_inputs, first)
            why = close(outs["output_0"], fd)
            report.check(f"{label} d/d{first}", why is None, why)


def entry_result_is_float(fn, inputs):
    try:
        r = fn(**inputs)
    except Exception:  # noqa: BLE001
        return False
    return isinstance(r, np.ndarray) and r.dtype == np.float32


KINKED = {"cnn": 1e-3}

PROGRAM_REFUSALS = {
    # program: the refusal its gradient meets (none at present)
}


def check_programs(report, work):
    """The gradient of every float-valued entry of tests/programs w.r.t. its float inputs."""
    checked = 0
    for py in lib.list_programs():
        stem = os.path.splitext(os.path.basename(py))[0]
        with open(py) as f:
            source = f.read()
        tree = ast.parse(source)
        options = lib.program_options(py)
        module = lib.load_eager_module(py)
        for entry in lib.entry_names(py):
            fn = getattr(module, entry)
            sig = lib.signature(fn)
            float_params = [n for n, dt, _ in sig if np.dtype(dt.np) == np.float32]
            if not float_params:
                continue
            binding = lib.bindings(sig, options)[0]
            inputs = lib.make_inputs(sig, binding, lib.seed_for(stem, entry, "grad"), options)
            if not entry_result_is_float(fn, inputs):
                continue
            node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry)
            params = ", ".join(ast.get_source_segment(source, a) for a in node.args.args)
            names = ", ".join(a.arg for a in node.args.args)
            argnums = tuple(k for k, (n, dt, _) in enumerate(sig) if n in float_params)
            wrapper = (f"\n\ndef grad_probe_loss({names}):\n    return sg.sum(sg.sin({entry}({names})))\n\n\n"
                       f"@sg.function\ndef grad_probe({params}):\n"
                       f"    return sg.grad(grad_probe_loss, argnums={argnums!r})({names})\n")
            guard = source.find('if __name__ == "__main__":')
            text = (source if guard < 0 else source[:guard]) + wrapper
            path = os.path.join(work, f"prog_{stem}_{entry}.py")
            with open(path, "w") as f:
                f.write(text)
            graph = path[:-3] + ".sgraph"
            label = f"{stem}.{entry}"
            proc = lib.run_tool("graph-compile", [path, "-o", graph, "--entry", "grad_probe"])
            if stem in PROGRAM_REFUSALS:
                want = PROGRAM_REFUSALS[stem]
                report.check(f"{label} refused", proc.returncode == 1 and want in proc.stderr and ".py:" in proc.stderr,
                             f"expected a located refusal naming {want}, got {lib.describe_result(proc)}")
                continue
            if proc.returncode != 0:
                report.fail(label, f"graph-compile {lib.describe_result(proc)}")
                continue
            run, out_dir = lib.run_graph(graph, "grad_probe", inputs, os.path.join(work, f"run_{stem}_{entry}"))
            if run.returncode != 0:
                report.fail(label, f"graph-run {lib.describe_result(run)}")
                continue
            eager = lib.load_eager_module(path)

            def probe(**kw):
                return np.sum(np.sin(np.asarray(getattr(eager, entry)(**kw), dtype=np.float64)))
            eager_grads = None
            if hasattr(sg, "grad"):  # eager mode's own gradient of the same probe
                try:
                    eager_grads = sg.grad(eager.grad_probe_loss, argnums=argnums)(*[inputs[n] for n, _, _ in sig])
                except Exception as e:  # noqa: BLE001 - any failure is the finding
                    report.fail(f"{label} eager", f"{type(e).__name__}: {e}")
            for k in argnums:
                n = sig[k][0]
                got = np.load(os.path.join(out_dir, f"output_{argnums.index(k)}.npy"))
                if eager_grads is not None:
                    want = as_array(eager_grads[argnums.index(k)])
                    why = close(got, want)
                    report.check(f"{label} d/d{n} compiled vs eager", why is None, why)
                if inputs[n].size > 64:
                    continue  # finite differences cost two runs per element
                # Programs with kinks (relu, max pools) need steps that stay clear of them.
                fd = finite_difference(probe, inputs, n, wrap=False, eps=KINKED.get(stem, EPS))
                why = close(got, fd)
                report.check(f"{label} d/d{n}", why is None, why)
            checked += 1
    report.check("programs with a float result were found", checked >= 10, f"only {checked}")


def check_refusals(report, work):
    cases = {
        "non_scalar": ("""
def f(x):
    return x * 2.0


@sg.function
def g(x: sg.f32[3]):
    return sg.grad(f)(x)
""", "needs the function to return a scalar float; it returned f32[3]"),
        "integer_input": ("""
def f(x, i):
    return sg.sum(x) * 2.0


@sg.function
def g(x: sg.f32[3], i: sg.i64[3]):
    return sg.grad(f, argnums=1)(x, i)
""", "holds a i64 tensor, which has no gradient"),
        "checkpoint_segment_zero": ("""
def f(x):
    return sg.sum(x * x)


@sg.function
def g(x: sg.f32[3]):
    return sg.grad(sg.checkpoint(f, segment=0))(x)
""", "sg.checkpoint's segment must be a positive int"),
    }
    for name, (body, message) in cases.items():
        py = os.path.join(work, f"refuse_{name}.py")
        with open(py, "w") as f:
            f.write(HEADER + body)
        proc = lib.run_tool("graph-compile", [py, "-o", py[:-3] + ".sgraph"])
        located = f"refuse_{name}.py:" in proc.stderr
        report.check(f"refusal {name}", proc.returncode == 1 and message in proc.stderr and located,
                     f"expected exit 1 with a located '{message}', got {lib.describe_result(proc)}")


STABILITY = """
def loss(z, y):
    return sg.nn.cross_entropy(z, y) + sg.sum(sg.log(sg.softmax(z, axis=-1))) * 0.001 \\
        + sg.sum(sg.log(1.0 + sg.exp(z))) * 0.001 + sg.sum(sg.log(sg.sigmoid(z))) * 0.001 \\
        + sg.sum(sg.log(sg.sum(sg.exp(z), axis=1))) * 0.001


@sg.function
def g(z: sg.f32[2, 3], y: sg.i64[2]):
    value, grad = sg.value_and_grad(loss)(z, y)
    return value, grad
"""


def check_stability(report, work):
    """Logits of +-1000: a finite loss and finite gradients (the rewrites of SPEC §11)."""
    z = np.array([[1000, -1000, 0], [-1000, 1000, 3]], np.float32)
    inputs = {"z": z, "y": np.array([1, 2], np.int64)}
    outs, _ = compile_and_run(report, "stability", HEADER + STABILITY, inputs, work)
    if outs is None:
        return
    report.check("stability loss finite", np.isfinite(outs["output_0"]).all(), f"loss {outs['output_0']}")
    report.check("stability gradient finite", np.isfinite(outs["output_1"]).all(), f"gradient {outs['output_1']}")
    py = os.path.join(work, "stability.py")
    proc = lib.run_tool("graph-compile", [py, "-o", py[:-3] + ".sgraph", "--explain-staging"])
    for form in ("log(softmax(x))", "log(1 + exp(x))", "log(sigmoid(x))", "log(sum(exp(x)))"):
        report.check(f"--explain-staging names {form}", f"stability.py:" in proc.stdout + proc.stderr and
                     f"{form}: rewritten" in proc.stdout + proc.stderr, proc.stdout[-400:])


MODEL = """
class Dense:
    def __init__(self, w, b, activation=None):
        self.w = w
        self.b = b
        self.activation = activation

    def __call__(self, x):
        y = x @ self.w + self.b
        return sg.tanh(y) if self.activation == "tanh" else y


class Model:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def loss(model, x):
    return sg.sum(sg.sin(model(x)))


@sg.function
def g(w1: sg.f32[3, 4], b1: sg.f32[4], w2: sg.f32[4, 2], b2: sg.f32[2], x: sg.f32["N", 3]):
    model = Model([Dense(w1, b1, "tanh"), Dense(w2, b2)])
    return sg.grad(loss)(model, x)
"""


def check_model_structure(report, work):
    """The gradient of a program's own objects has their structure: outputs named
    by path (layers.0.w, ...), compiled against finite differences and eager mode."""
    rng = np.random.default_rng(13)
    inputs = {"w1": draw(rng, (3, 4), "n"), "b1": draw(rng, (4,), "n"), "w2": draw(rng, (4, 2), "n"),
              "b2": draw(rng, (2,), "n"), "x": draw(rng, (5, 3), "n")}
    outs, module = compile_and_run(report, "model_structure", HEADER + MODEL, inputs, work)
    if outs is None:
        return
    names = {"w1": "layers.0.w", "b1": "layers.0.b", "w2": "layers.1.w", "b2": "layers.1.b"}
    report.check("model gradient outputs are named by path", set(outs) == set(names.values()), f"outputs {sorted(outs)}")

    def total(w1, b1, w2, b2, x):
        m = module.Model([module.Dense(w1, b1, "tanh"), module.Dense(w2, b2)])
        return module.loss(m, x)
    expected = lib.eager_outputs(module.g(**inputs))
    for arg, path in names.items():
        if path not in outs:
            continue
        why = close(outs[path], finite_difference(total, inputs, arg))
        report.check(f"model d/d{path}", why is None, why)
        why = close(outs[path], expected.get(path, np.zeros(0)))
        report.check(f"model d/d{path} compiled vs eager", why is None, why)


TAPED = """
def loss(w, xs):
    h = sg.zeros((3,))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ w + h)
    return sg.sum(h * h)


@sg.function
def g(w: sg.f32[2, 3], xs: sg.f32["T", 2]):
    return sg.grad(loss)(w, xs)
"""


def check_profile_tapes(report, work):
    """graph-run --profile reports the bytes a loop kept for its gradient: per
    iteration the same, so twice the iterations keep twice the bytes."""
    py = os.path.join(work, "taped.py")
    with open(py, "w") as f:
        f.write(HEADER + TAPED)
    graph = py[:-3] + ".sgraph"
    lib.compile_program(py, graph)
    rng = np.random.default_rng(14)
    kept = []
    for steps in (5, 10):
        inputs = {"w": draw(rng, (2, 3), "n"), "xs": draw(rng, (steps, 2), "n")}
        proc, _ = lib.run_graph(graph, "g", inputs, os.path.join(work, f"taped_{steps}"), ["--profile"])
        found = re.search(r"gradient tapes.*\n\s+\S+\s+(\d+) bytes", proc.stdout)
        report.check(f"--profile reports the tapes of {steps} iterations", proc.returncode == 0 and found,
                     proc.stdout[-600:] + proc.stderr[-300:])
        kept.append(int(found.group(1)) if found else 0)
    report.check("tapes grow with the iterations", kept[0] > 0 and kept[1] == 2 * kept[0], f"bytes kept {kept}")


CHECKPOINTED = """
def step(h, x, w):
    return sg.tanh(x @ w + h)


def run(w, xs, cell):
    h = sg.zeros((16,))
    for t in range(xs.shape[0]):
        h = cell(h, xs[t], w)
    return sg.sum(h)


@sg.function
def plain(w: sg.f32[4, 16], xs: sg.f32["T", 4]):
    return sg.grad(lambda w: run(w, xs, step))(w)


@sg.function
def checkpointed(w: sg.f32[4, 16], xs: sg.f32["T", 4]):
    return sg.grad(lambda w: run(w, xs, sg.checkpoint(step)))(w)
"""


def check_checkpoint_memory(report, work):
    """sg.checkpoint around a loop body of T = 10,000 iterations keeps about sqrt(T)
    states: --profile's tapes fall by more than 20x, and the gradient is the same."""
    py = os.path.join(work, "checkpointed.py")
    with open(py, "w") as f:
        f.write(HEADER + CHECKPOINTED)
    graph = py[:-3] + ".sgraph"
    lib.compile_program(py, graph)
    rng = np.random.default_rng(15)
    inputs = {"w": (draw(rng, (4, 16), "n") * 0.3).astype(np.float32),
              "xs": (draw(rng, (10000, 4), "n") * 0.3).astype(np.float32)}
    kept, grads = {}, {}
    for entry in ("plain", "checkpointed"):
        proc, out = lib.run_graph(graph, entry, inputs, os.path.join(work, entry), ["--profile"])
        found = re.findall(r"^\s+\S+:\d+:\d+\s+(\d+) bytes$", proc.stdout, re.M)
        report.check(f"checkpoint T=10000 {entry} runs and reports its tapes", proc.returncode == 0 and found,
                     proc.stdout[-600:] + proc.stderr[-300:])
        kept[entry] = sum(int(b) for b in found)
        grads[entry] = np.load(os.path.join(out, "output_0.npy")) if proc.returncode == 0 else None
    report.check("checkpoint keeps under 1/20 of the plain loop's tapes",
                 0 < kept["checkpointed"] * 20 < kept["plain"], f"bytes kept {kept}")
    if grads["plain"] is not None and grads["checkpointed"] is not None:
        why = close(grads["checkpointed"], grads["plain"])
        report.check("checkpoint T=10000: the same gradient as the plain loop", why is None, why)


def check_example(report, work):
    """examples/grad_tree_lstm.py: the compiled gradient by recursion equals eager mode's."""
    py = os.path.join(lib.SOURCE_DIR, "examples", "grad_tree_lstm.py")
    graph = os.path.join(work, "grad_tree_lstm.sgraph")
    try:
        lib.compile_program(py, graph)
    except lib.E2EError as e:
        report.fail("grad_tree_lstm", str(e))
        return
    module = lib.load_eager_module(py)
    for seed, m in ((0, 9), (1, 1), (2, 17)):
        inputs = module.example_inputs(seed, m)
        proc, out_dir = lib.run_graph(graph, "tree_lstm_grads", inputs, os.path.join(work, f"tree_lstm_{seed}"))
        if proc.returncode != 0:
            report.fail("grad_tree_lstm", f"graph-run {lib.describe_result(proc)}")
            return
        expected = lib.eager_outputs(module.tree_lstm_grads(**inputs))
        for name, e in expected.items():
            a = np.load(os.path.join(out_dir, f"{name}.npy"))
            why = lib.compare(name, e, a)
            report.check(f"grad_tree_lstm M={m} {name}", why is None, why)


def main():
    report = Report()
    with tempfile.TemporaryDirectory(prefix="sg_grad_") as work:
        check_op_cases(report, work)
        check_flow_cases(report, work)
        check_refusals(report, work)
        check_stability(report, work)
        check_example(report, work)
        grad_recursion.check_recursion_tape(report, work, sys.modules[__name__])
        check_model_structure(report, work)
        check_profile_tapes(report, work)
        check_checkpoint_memory(report, work)
        check_programs(report, work)
    print(f"{report.passed} checks passed, {len(report.failures)} failed")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
