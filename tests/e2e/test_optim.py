"""End to end: stagegraph.optim (SPEC §12), compiled and eager, against NumPy
transcriptions of PyTorch's update rules (torch.optim.SGD, Adam, AdamW, RMSprop;
torch.nn.utils.clip_grad_norm_) and of the schedules' formulas, written here.

1. Every optimizer and option (momentum, nesterov, weight decay, a schedule as lr,
   clipping): a program takes params and K steps of gradients as inputs, keeps its
   params in a dict of tuples, and runs K updates in a staged loop (sg.range). The
   graph-run outputs (named by path: params.layer.0, ..., count) and the program's
   eager run are compared with the reference.
2. Training: a dataclass of params fitted to a fixed quadratic loss with
   sg.value_and_grad for K steps, compiled and eager, against the reference with the
   gradient written out; a schedule called with a Python int; the module reached as
   sg.optim and through `import stagegraph.optim as optim`.
3. Refusals: a negative lr, an unknown option and mismatched structures are located
   compile errors (and raise in eager mode).
"""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

K = 5


# ---- references: PyTorch's rules in float64 --------------------------------------

def cosine(init, decay, alpha):
    return lambda t: init * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * min(t, decay) / decay)) + alpha)


def warmup(peak, steps, init=0.0):
    return lambda t: init + (peak - init) * min(t, steps) / steps


def warmup_cosine(peak, warm, decay, init=0.0, end=0.0):
    def f(t):
        if t < warm:
            return warmup(peak, warm, init)(t)
        frac = min(max(t - warm, 0), decay - warm) / (decay - warm)
        return end + (peak - end) * 0.5 * (1 + np.cos(np.pi * frac))
    return f


def lr_at(lr, t):
    return lr(t) if callable(lr) else lr


def ref_sgd(params, grads_seq, lr, momentum=0.0, nesterov=False, weight_decay=0.0, clip=None):
    p = [x.astype(np.float64) for x in params]
    buf = [np.zeros_like(x) for x in p]
    for t, grads in enumerate(grads_seq):
        g = [x.astype(np.float64) for x in grads]
        if clip is not None:
            norm = np.sqrt(sum(np.sum(x * x) for x in g))
            g = [x * min(clip / (norm + 1e-6), 1.0) for x in g]
        g = [gi + weight_decay * pi for gi, pi in zip(g, p)]
        if momentum:
            buf = [g[i] if t == 0 else momentum * buf[i] + g[i] for i in range(len(p))]
            g = [g[i] + momentum * buf[i] for i in range(len(p))] if nesterov else buf
        p = [pi - lr_at(lr, t) * gi for pi, gi in zip(p, g)]
    return p


def ref_adam(params, grads_seq, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0, decoupled=False):
    p = [x.astype(np.float64) for x in params]
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    for t0, grads in enumerate(grads_seq):
        t = t0 + 1
        a = lr_at(lr, t0)
        g = [x.astype(np.float64) for x in grads]
        if decoupled:
            p = [pi * (1 - a * weight_decay) for pi in p]
        else:
            g = [gi + weight_decay * pi for gi, pi in zip(g, p)]
        m = [b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g)]
        v = [b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g)]
        step = a / (1 - b1 ** t)
        denom = [np.sqrt(vi) / np.sqrt(1 - b2 ** t) + eps for vi in v]
        p = [pi - step * mi / di for pi, mi, di in zip(p, m, denom)]
    return p


def ref_rmsprop(params, grads_seq, lr, alpha=0.99, eps=1e-8, momentum=0.0, weight_decay=0.0):
    p = [x.astype(np.float64) for x in params]
    v = [np.zeros_like(x) for x in p]
    buf = [np.zeros_like(x) for x in p]
    for t, grads in enumerate(grads_seq):
        g = [x.astype(np.float64) + weight_decay * pi for x, pi in zip(grads, p)]
        v = [alpha * vi + (1 - alpha) * gi * gi for vi, gi in zip(v, g)]
        avg = [np.sqrt(vi) + eps for vi in v]
        if momentum:
            buf = [momentum * bi + gi / ai for bi, gi, ai in zip(buf, g, avg)]
            p = [pi - lr_at(lr, t) * bi for pi, bi in zip(p, buf)]
        else:
            p = [pi - lr_at(lr, t) * gi / ai for pi, gi, ai in zip(p, g, avg)]
    return p


# ---- 1. optimizers over a dict of tuples, K updates in a staged loop --------------

# (name, module-level optimizer, reference(params, grads_seq), clip)
CASES = [
    ("sgd", "optim.sgd(lr=0.1)", lambda p, g: ref_sgd(p, g, 0.1), None),
    ("sgd_momentum", "optim.sgd(lr=0.1, momentum=0.9)", lambda p, g: ref_sgd(p, g, 0.1, momentum=0.9), None),
    ("sgd_nesterov_wd", "optim.sgd(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01)",
     lambda p, g: ref_sgd(p, g, 0.05, momentum=0.8, nesterov=True, weight_decay=0.01), None),
    ("sgd_clip", "optim.sgd(lr=0.1, momentum=0.5)", lambda p, g: ref_sgd(p, g, 0.1, momentum=0.5, clip=0.7), 0.7),
    ("adam", "optim.adam(lr=0.01)", lambda p, g: ref_adam(p, g, 0.01), None),
    ("adam_l2", "optim.adam(lr=0.02, b1=0.8, b2=0.99, eps=1e-6, weight_decay=0.1)",
     lambda p, g: ref_adam(p, g, 0.02, b1=0.8, b2=0.99, eps=1e-6, weight_decay=0.1), None),
    ("adamw", "optim.adamw(lr=0.01, weight_decay=0.1)",
     lambda p, g: ref_adam(p, g, 0.01, weight_decay=0.1, decoupled=True), None),
    ("rmsprop", "optim.rmsprop(lr=0.01)", lambda p, g: ref_rmsprop(p, g, 0.01), None),
    ("rmsprop_momentum_wd", "optim.rmsprop(lr=0.01, alpha=0.9, momentum=0.9, weight_decay=0.05)",
     lambda p, g: ref_rmsprop(p, g, 0.01, alpha=0.9, momentum=0.9, weight_decay=0.05), None),
    ("adam_cosine", "optim.adam(lr=optim.cosine_decay(0.05, 4, alpha=0.1))",
     lambda p, g: ref_adam(p, g, cosine(0.05, 4, 0.1)), None),
    ("sgd_warmup", "optim.sgd(lr=optim.warmup_linear(0.2, 3, init_value=0.02), momentum=0.5)",
     lambda p, g: ref_sgd(p, g, warmup(0.2, 3, 0.02), momentum=0.5), None),
    ("adamw_warmup_cosine", "optim.adamw(lr=optim.warmup_cosine_decay(0.05, 2, 4, end_value=0.01))",
     lambda p, g: ref_adam(p, g, warmup_cosine(0.05, 2, 4, end=0.01), weight_decay=1e-2, decoupled=True), None),
    ("rmsprop_constant", "optim.rmsprop(lr=optim.constant(0.02))", lambda p, g: ref_rmsprop(p, g, 0.02), None),
]

STEP_PROGRAM = """import stagegraph as sg
from stagegraph import optim

OPT = {opt}


@sg.function
def run(w: sg.f32[3, 2], b: sg.f32[2], gw: sg.f32[{k}, 3, 2], gb: sg.f32[{k}, 2]):
    params = {{"layer": (w, b)}}
    state = OPT.init(params)
    for k in sg.range({k}):
        grads = {{"layer": (gw[k], gb[k])}}
        {clip}
        params, state = OPT.update(params, grads, state)
    return {{"params": params, "count": state.count}}
"""


def compile_and_run(report, case, source, inputs, work):
    """(compiled outputs, eager outputs) of entry `run`, or None after reporting a failure."""
    path = os.path.join(work, f"{case}.py")
    with open(path, "w") as f:
        f.write(source)
    graph = os.path.join(work, f"{case}.sgraph")
    try:
        lib.compile_program(path, graph)
    except lib.E2EError as e:
        report.fail(case, str(e))
        return None
    proc, out_dir = lib.run_graph(graph, "run", inputs, os.path.join(work, case))
    if proc.returncode != 0:
        report.fail(case, "graph-run " + lib.describe_result(proc))
        return None
    try:
        eager = lib.eager_outputs(lib.load_eager_module(path).run(**inputs))
        compiled = lib.load_outputs(out_dir, list(eager))
    except Exception as e:  # noqa: BLE001 - reported as the case's failure
        report.fail(case, f"eager run or outputs: {type(e).__name__}: {e}")
        return None
    return compiled, eager


def near(name, want, got):
    """None when `got` (f32) is within 1e-4 x max(1, largest |want|) of the float64
    reference `want`, else a message; integers exactly."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{name}: {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.dtype.kind != "f":
        return None if np.array_equal(got, want) else f"{name}: {got} != {want}"
    tol = 1e-4 * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    return None if err <= tol else f"{name}: max abs error {err:.3g} > {tol:.3g} ({got!r} vs {want!r})"


def check_against(report, case, compiled, eager, expected):
    """Compiled and eager each against the float64 reference, and compiled against
    eager by SPEC §1's bound."""
    problems = []
    for name, want in expected.items():
        want = np.asarray(want)
        want64 = want.astype(np.float64) if want.dtype.kind == "f" else want
        for mode, got in (("compiled", compiled), ("eager", eager)):
            if name not in got:
                problems.append(f"{mode}: no output {name} (has {sorted(got)})")
                continue
            if (why := near(name, want64.astype(got[name].dtype) if want.dtype.kind != "f" else want64,
                            got[name] if want.dtype.kind != "f" else got[name].astype(np.float64))) is not None:
                problems.append(f"{mode} vs reference: {why}")
        if name in compiled and name in eager and (why := lib.compare(name, eager[name], compiled[name])):
            problems.append(f"compiled vs eager: {why}")
    report.check(case, not problems, "; ".join(problems), f"{len(expected)} outputs, compiled and eager")


def optimizer_cases(report, work):
    rng = np.random.default_rng(34)
    for name, opt, ref, clip in CASES:
        inputs = {
            "w": rng.standard_normal((3, 2)).astype(np.float32),
            "b": rng.standard_normal(2).astype(np.float32),
            "gw": rng.standard_normal((K, 3, 2)).astype(np.float32),
            "gb": rng.standard_normal((K, 2)).astype(np.float32),
        }
        clip_line = f"grads = optim.clip_by_global_norm(grads, {clip})" if clip else "pass"
        source = STEP_PROGRAM.format(opt=opt, k=K, clip=clip_line)
        got = compile_and_run(report, name, source, inputs, work)
        if got is None:
            continue
        w, b = ref([inputs["w"], inputs["b"]], [(inputs["gw"][k], inputs["gb"][k]) for k in range(K)])
        expected = {"params.layer.0": w, "params.layer.1": b, "count": np.array(K, dtype=np.int32)}
        check_against(report, name, *got, expected)


# ---- 2. training a dataclass on a quadratic loss with value_and_grad ---------------

TRAIN_PROGRAM = """import dataclasses

import stagegraph as sg
{imp}


@dataclasses.dataclass
class Params:
    w: sg.Tensor
    b: sg.Tensor


def loss_fn(p, a, y):
    r = a @ p.w + p.b - y
    return sg.mean(r * r)


@sg.function
def run(a: sg.f32[8, 3], y: sg.f32[8], w0: sg.f32[3]):
    opt = {opt}
    params = Params(w0, 0.5 * sg.ones(()))
    state = opt.init(params)
    loss = sg.zeros(())
    for k in sg.range({k}):
        loss, grads = sg.value_and_grad(loss_fn)(params, a, y)
        params, state = opt.update(params, grads, state)
    return {{"params": params, "loss": loss, "lr_at_2": {sched}(2)}}
"""


def train_cases(report, work):
    rng = np.random.default_rng(7)
    inputs = {
        "a": rng.standard_normal((8, 3)).astype(np.float32),
        "y": rng.standard_normal(8).astype(np.float32),
        "w0": rng.standard_normal(3).astype(np.float32),
    }
    a, y = inputs["a"].astype(np.float64), inputs["y"].astype(np.float64)
    variants = [
        ("train_adam_dataclass", "from stagegraph import optim", "optim.adam(lr=0.1)", "optim.cosine_decay(1.0, 4)",
         lambda p, g: ref_adam(p, g, 0.1), cosine(1.0, 4, 0.0)),
        ("train_sg_optim_adamw", "", "sg.optim.adamw(lr=optim_lr())", "sg.optim.warmup_linear(0.3, 4)",
         lambda p, g: ref_adam(p, g, 0.05, weight_decay=1e-2, decoupled=True), warmup(0.3, 4)),
        ("train_import_as_rmsprop", "import stagegraph.optim as optim", "optim.rmsprop(lr=0.05, momentum=0.5)",
         "optim.constant(0.25)", lambda p, g: ref_rmsprop(p, g, 0.05, momentum=0.5), lambda t: 0.25),
    ]
    for name, imp, opt, sched, ref, sched_ref in variants:
        source = TRAIN_PROGRAM.format(imp=imp, opt=opt, k=K, sched=sched)
        if "optim_lr()" in opt:
            source += "\n\ndef optim_lr():\n    return 0.05\n"
        got = compile_and_run(report, name, source, inputs, work)
        if got is None:
            continue
        # The reference: the loss's gradient written out; each step replays the
        # update rule from the start over the gradients so far.
        start = [inputs["w0"].astype(np.float64), np.array(0.5)]
        params, grads_seq, loss = start, [], None
        for _ in range(K):
            r = a @ params[0] + params[1] - y
            loss = np.mean(r * r)
            grads_seq.append([2 * a.T @ r / len(y), np.array(2 * np.mean(r))])
            params = ref(start, grads_seq)
        expected = {"params.w": params[0], "params.b": params[1], "loss": loss, "lr_at_2": np.float32(sched_ref(2))}
        check_against(report, name, *got, expected)


# ---- 3. refusals ---------------------------------------------------------------------

REFUSALS = [
    ("negative_lr", "OPT = optim.adam(lr=-0.1)", "ValueError: adam: lr must be >= 0.0", 4, ValueError),
    ("unknown_option", "OPT = optim.sgd(lr=0.1, momentom=0.9)", "momentom", 4, TypeError),
    ("nesterov_without_momentum", "OPT = optim.sgd(lr=0.1, nesterov=True)", "nesterov needs a momentum", 4,
     ValueError),
]

REFUSAL_PROGRAM = """import stagegraph as sg
from stagegraph import optim

{line}


@sg.function
def run(w: sg.f32[3]):
    return OPT.update(w, w, OPT.init(w))[0]
"""

MISMATCH_PROGRAM = """import stagegraph as sg
from stagegraph import optim


@sg.function
def run(w: sg.f32[3]):
    opt = optim.sgd(lr=0.1)
    return opt.update({"w": w}, {"v": w}, opt.init({"w": w}))[0]
"""


def refusal_cases(report, work):
    for name, line, message, line_no, exc in REFUSALS:
        path = os.path.join(work, f"{name}.py")
        with open(path, "w") as f:
            f.write(REFUSAL_PROGRAM.format(line=line))
        proc = lib.run_tool("graph-compile", [path, "-o", os.path.join(work, f"{name}.sgraph")])
        located = f"{name}.py:{line_no}:" in proc.stderr
        ok = proc.returncode == 1 and message in proc.stderr and located
        eager_ok = False
        try:
            lib.load_eager_module(path)
        except exc as e:
            eager_ok = message.split(": ", 1)[-1] in str(e) or message in str(e)
        report.check(name, ok and eager_ok,
                     f"exit {proc.returncode}, located at line {line_no}: {located}, eager raised {exc.__name__}: "
                     f"{eager_ok}; stderr: {proc.stderr.strip()[:400]}", "a located compile error; eager raises")
    path = os.path.join(work, "mismatch.py")
    with open(path, "w") as f:
        f.write(MISMATCH_PROGRAM)
    proc = lib.run_tool("graph-compile", [path, "-o", os.path.join(work, "mismatch.sgraph")])
    report.check("mismatched_structures", proc.returncode == 1 and "does not match" in proc.stderr
                 and "mismatch.py:8:" in proc.stderr, f"exit {proc.returncode}; stderr: {proc.stderr.strip()[:400]}",
                 "params and grads of different keys: a located compile error")


def main():
    report = lib.Report("stagegraph.optim: compiled and eager against PyTorch's rules")
    with tempfile.TemporaryDirectory(prefix="sg_optim_") as work:
        optimizer_cases(report, work)
        train_cases(report, work)
        refusal_cases(report, work)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
