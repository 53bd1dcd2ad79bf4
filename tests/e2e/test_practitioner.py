"""End to end: tests/programs/practitioner (issue 36), programs written once the way a
practitioner writes a first version (a GPT decoder with a KV cache, a Tree-LSTM,
seq2seq with attention and beam search, a Kalman filter, an adaptive RK45
integrator, CTC decoding, k-means, a particle filter), compiled unchanged by
graph-compile (-O2), run by graph-run, and checked against NumPy references written
here independently of Stagegraph: float64 unless a case says otherwise. Discrete
results (tokens, labels, decoded classes) must be equal; the inputs are drawn so that
no decision sits within rounding of a tie. Eager mode runs each program too and must
agree with the compiled one."""

import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

CORPUS = os.path.join(lib.SOURCE_DIR, "tests", "programs", "practitioner")


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def f64(inputs):
    return {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in inputs.items()}


# ---- the cases: (program, entry, inputs, reference, check) ---------------------------------

def gpt_inputs(seed):
    rng = np.random.default_rng(seed)
    w = {k: (rng.standard_normal(s) * sc).astype(np.float32) for k, s, sc in
         [("wte", (64, 32), 1.0), ("wpe", (64, 32), 0.3), ("wq", (32, 32), 0.2), ("wk", (32, 32), 0.2),
          ("wv", (32, 32), 0.2), ("wo", (32, 32), 0.2), ("w1", (32, 64), 0.2), ("w2", (64, 32), 0.2)]}
    w.update(g1=np.ones(32, np.float32), b1=np.zeros(32, np.float32),
             g2=(1 + 0.1 * rng.standard_normal(32)).astype(np.float32), b2=np.zeros(32, np.float32))
    return {"prompt": rng.integers(0, 64, 5).astype(np.int64), "steps": np.int64(12), **w}


def gpt_reference(inp):
    p = f64(inp)
    erf = np.vectorize(math.erf)

    def ln(x, g, b):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b

    keys, values = [], []

    def block(x):
        h = ln(x, p["g1"], p["b1"])
        keys.append(h @ p["wk"])
        values.append(h @ p["wv"])
        q = (h @ p["wq"]).reshape(4, 8)
        kh = np.array(keys).reshape(-1, 4, 8).transpose(1, 0, 2)
        vh = np.array(values).reshape(-1, 4, 8).transpose(1, 0, 2)
        att = softmax(np.einsum("htd,hd->ht", kh, q) / math.sqrt(8))
        x = x + np.einsum("ht,htd->hd", att, vh).reshape(32) @ p["wo"]
        u = ln(x, p["g2"], p["b2"]) @ p["w1"]
        return x + (0.5 * u * (1 + erf(u / math.sqrt(2)))) @ p["w2"]

    for t, tok in enumerate(p["prompt"]):
        x = block(p["wte"][tok] + p["wpe"][t])
    tokens = []
    for s in range(int(p["steps"])):
        tok = int(np.argmax(x @ p["wte"].T))
        tokens.append(tok)
        x = block(p["wte"][tok] + p["wpe"][len(p["prompt"]) + s])
    return {"output_0": np.array(tokens, np.int64), "output_1": np.array(keys)}


def kalman_inputs(seed):
    rng = np.random.default_rng(seed)
    t = np.arange(40) * 0.1
    truth = np.stack([np.cos(t) * 5, np.sin(t) * 3], axis=1)
    return {"zs": (truth + rng.standard_normal(truth.shape) * 0.5).astype(np.float32),
            "dt": np.float32(0.1), "q": np.float32(0.01), "r": np.float32(0.25)}


def kalman_reference(inp):
    p = f64(inp)
    F = np.eye(4)
    F[0, 2] = F[1, 3] = p["dt"]
    H, Q, R = np.eye(2, 4), p["q"] * np.eye(4), p["r"] * np.eye(2)
    x, P, means = np.zeros(4), 10.0 * np.eye(4), []
    for z in p["zs"]:
        x, P = F @ x, F @ P @ F.T + Q
        K = P @ H.T @ np.linalg.inv(H @ P @ H.T + R)
        x = x + K @ (z - H @ x)
        P = (np.eye(4) - K @ H) @ P
        means.append(x)
    return {"output_0": np.array(means), "output_1": P}


def kmeans_inputs(seed):
    rng = np.random.default_rng(seed)
    centers = np.array([[0, 0], [6, 0], [0, 6], [6, 6]], np.float64)
    x = np.concatenate([c + rng.standard_normal((30 + 5 * i, 2)) for i, c in enumerate(centers)])
    rng.shuffle(x)
    init = x[rng.choice(len(x), 4, replace=False)] if seed % 2 else np.array([[1, 1], [2, 2], [3, 3], [40, 40]])
    return {"x": x.astype(np.float32), "init": np.asarray(init, np.float32), "iters": np.int64(8)}


def kmeans_reference(inp):
    p = f64(inp)
    x, centers = p["x"], p["init"]
    for _ in range(int(p["iters"])):
        labels = np.argmin(((x[:, None, :] - centers[None]) ** 2).sum(-1), axis=1)
        centers = np.stack([x[labels == k].mean(0) if (labels == k).any() else centers[k] for k in range(4)])
    return {"output_0": centers, "output_1": labels.astype(np.int64)}


def ctc_inputs(seed):
    rng = np.random.default_rng(seed)
    t = 30 + seed
    logits = rng.standard_normal((t, 6))
    # Runs of the same class, and blanks, as a trained model's frames have them.
    cls = np.repeat(rng.integers(0, 6, t // 3 + 1), 3)[:t]
    logits[np.arange(t), cls] += 4.0
    if seed == 3:
        logits[:, 0] += 100.0  # every frame blank: the empty decoding
    return {"logits": logits.astype(np.float32)}


def ctc_reference(inp):
    best = np.argmax(inp["logits"].astype(np.float64), axis=1)
    out = [int(c) for i, c in enumerate(best) if c != 0 and (i == 0 or c != best[i - 1])]
    return {"output_0": np.array(out, np.int64)}


def beam_inputs(seed):
    rng = np.random.default_rng(seed)
    return {"src": rng.integers(1, 40, 7).astype(np.int64),
            "emb": (rng.standard_normal((40, 16)) * 0.8).astype(np.float32),
            "w_enc": (rng.standard_normal((32, 16)) * 0.4).astype(np.float32),
            "w_dec": (rng.standard_normal((32, 16)) * 0.4).astype(np.float32),
            "w_out": (rng.standard_normal((16, 40)) * 1.0).astype(np.float32),
            "max_len": np.int64(6)}


def beam_reference(inp):
    p = f64(inp)
    h, states = np.zeros(16), []
    for tok in p["src"]:
        h = np.tanh(np.concatenate([p["emb"][tok], h]) @ p["w_enc"])
        states.append(h)
    enc = np.array(states)
    hs = np.stack([h] * 3)
    scores = np.array([0.0, -1e9, -1e9])
    tokens = np.zeros((3, 0), np.int64)
    last = np.zeros(3, np.int64)
    for _ in range(int(p["max_len"])):
        hs = np.tanh(np.concatenate([p["emb"][last], hs], axis=1) @ p["w_dec"])
        ctx = softmax(hs @ enc.T, axis=1) @ enc
        total = (scores[:, None] + log_softmax((hs + ctx) @ p["w_out"], axis=1)).reshape(-1)
        top = np.argsort(-total, kind="stable")[:3]
        scores, origin, word = total[top], top // 40, top % 40
        hs, tokens, last = hs[origin], np.concatenate([tokens[origin], word[:, None]], axis=1), word
    return {"output_0": tokens[0], "output_1": np.float64(scores[0])}


def tree_inputs(seed):
    rng = np.random.default_rng(seed)
    n_leaves = 6 + seed * 3
    left, right = [-1] * n_leaves, [-1] * n_leaves
    pool = list(range(n_leaves))
    while len(pool) > 1:  # join two random subtrees until one remains
        a, b = (pool.pop(int(rng.integers(len(pool)))) for _ in range(2))
        left.append(a)
        right.append(b)
        pool.append(len(left) - 1)
    n = len(left)
    return {"left": np.array(left, np.int64), "right": np.array(right, np.int64),
            "leaf_x": rng.standard_normal((n, 8)).astype(np.float32), "root": np.int64(pool[0]),
            "w": (rng.standard_normal((8, 40)) * 0.4).astype(np.float32),
            "u": (rng.standard_normal((16, 40)) * 0.4).astype(np.float32),
            "b": (rng.standard_normal(40) * 0.1).astype(np.float32)}


def tree_reference(inp):
    p = f64(inp)

    def node(i):
        if p["left"][i] < 0:
            hl = cl = hr = cr = np.zeros(8)
            x = p["leaf_x"][i]
        else:
            (hl, cl), (hr, cr), x = node(p["left"][i]), node(p["right"][i]), np.zeros(8)
        z = x @ p["w"] + np.concatenate([hl, hr]) @ p["u"] + p["b"]
        c = sigmoid(z[0:8]) * np.tanh(z[32:40]) + sigmoid(z[8:16]) * cl + sigmoid(z[16:24]) * cr
        return sigmoid(z[24:32]) * np.tanh(c), c

    return {"output_0": node(int(p["root"]))[0]}


def lorenz_inputs(seed):
    return {"y0": np.array([1.0 + seed, 1.0, 1.0], np.float32), "t1": np.float32(1.0), "rtol": np.float32(1e-5)}


def lorenz_reference(inp):
    """scipy's RK45 tableau in float64 (the same controller as the program)."""
    p = f64(inp)

    def f(y):
        return np.array([10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1], y[0] * y[1] - 8.0 / 3.0 * y[2]])

    t, h, y, ts, ys = 0.0, 0.01, p["y0"], [], []
    while t < p["t1"]:
        h = min(h, p["t1"] - t)
        k1 = f(y)
        k2 = f(y + h * (k1 / 5))
        k3 = f(y + h * (k1 * 3 / 40 + k2 * 9 / 40))
        k4 = f(y + h * (k1 * 44 / 45 - k2 * 56 / 15 + k3 * 32 / 9))
        k5 = f(y + h * (k1 * 19372 / 6561 - k2 * 25360 / 2187 + k3 * 64448 / 6561 - k4 * 212 / 729))
        k6 = f(y + h * (k1 * 9017 / 3168 - k2 * 355 / 33 + k3 * 46732 / 5247 + k4 * 49 / 176 - k5 * 5103 / 18656))
        y5 = y + h * (k1 * 35 / 384 + k3 * 500 / 1113 + k4 * 125 / 192 - k5 * 2187 / 6784 + k6 * 11 / 84)
        e = h * (k1 * 71 / 57600 - k3 * 71 / 16695 + k4 * 71 / 1920 - k5 * 17253 / 339200 + k6 * 22 / 525
                 - f(y5) / 40)
        err = np.sqrt(np.mean((e / (1e-6 + p["rtol"] * np.maximum(abs(y), abs(y5)))) ** 2))
        if err <= 1.0:
            t, y = t + h, y5
            ts.append(t)
            ys.append(y)
        h = h * min(5.0, max(0.2, 0.9 * (err + 1e-10) ** -0.2))
    return {"output_0": np.array(ts), "output_1": np.array(ys)}


def lorenz_check(got, want):
    """The step count follows every rounding of the error estimate: equal within 2
    steps; the end point the same time and, within the tolerance asked, state."""
    ts, ys = got["output_0"], got["output_1"]
    if abs(len(ts) - len(want["output_0"])) > 2:
        return f"{len(ts)} accepted steps, the reference {len(want['output_0'])}"
    if len(ts) == 0 or not np.all(np.diff(ts) > 0) or abs(ts[-1] - want["output_0"][-1]) > 1e-5:
        return f"times {ts[:3]} ... {ts[-1:]} do not rise to t1"
    err = np.max(np.abs(ys[-1] - want["output_1"][-1])) / np.max(np.abs(want["output_1"][-1]))
    return None if err < 2e-3 else f"end state off by {err:.1e} relative"


def particle_inputs(seed):
    rng = np.random.default_rng(seed)
    t, m = 30, 256
    x, ys = 0.1, []
    for k in range(t):
        x = 0.5 * x + 25 * x / (1 + x * x) + 8 * np.cos(1.2 * k) + rng.standard_normal() * math.sqrt(10)
        ys.append(x * x / 20 + rng.standard_normal())
    return {"ys": np.array(ys, np.float32), "noise": rng.standard_normal((t, m)).astype(np.float32),
            "offsets": rng.random(t).astype(np.float32), "x0": (rng.standard_normal(m) * 2).astype(np.float32),
            "q": np.float32(10.0), "r": np.float32(1.0)}


def particle_reference(inp):
    """In float32, as the program computes: a resampling decision at a CDF boundary
    then goes the same way but for the last bits of a sum."""
    p = inp
    x, n, means = p["x0"], p["x0"].shape[0], []
    for t in range(p["ys"].shape[0]):
        x = (np.float32(0.5) * x + np.float32(25.0) * x / (np.float32(1.0) + x ** 2)
             + np.float32(8.0) * np.cos(np.float32(1.2) * np.float32(t)) + np.sqrt(p["q"]) * p["noise"][t])
        w = np.exp(np.float32(-0.5) * (p["ys"][t] - x ** 2 / np.float32(20.0)) ** 2 / p["r"])
        w = w / w.sum()
        means.append((w * x).sum())
        u = (np.arange(n, dtype=np.float32) + p["offsets"][t]) / np.float32(n)
        x = x[np.minimum(np.searchsorted(np.cumsum(w), u), n - 1)]
    return {"output_0": np.array(means, np.float32)}


def particle_check(got, want):
    """The filtered means track the reference's: resampling amplifies a last-bit
    difference into another particle now and then, never into another trajectory."""
    g, w = got["output_0"], want["output_0"]
    if g.shape != w.shape:
        return f"shape {g.shape}, the reference {w.shape}"
    err = np.max(np.abs(g - w))
    return None if err < 0.05 * np.max(np.abs(w)) else f"max abs difference {err:.3g}"


CASES = [
    ("gpt_decode", "generate", gpt_inputs, gpt_reference, None, (1, 2)),
    ("kalman", "track", kalman_inputs, kalman_reference, None, (1, 2)),
    ("kmeans", "kmeans", kmeans_inputs, kmeans_reference, None, (1, 2)),
    ("ctc_decode", "ctc_greedy", ctc_inputs, ctc_reference, None, (1, 2, 3)),
    ("ctc_decode", "ctc_greedy_loop", ctc_inputs, ctc_reference, None, (1, 2, 3)),
    ("beam_search", "translate", beam_inputs, beam_reference, None, (1, 2)),
    ("tree_lstm", "encode", tree_inputs, tree_reference, None, (1, 2, 3)),
    ("lorenz_rk45", "integrate", lorenz_inputs, lorenz_reference, lorenz_check, (1, 2)),
    ("particle_filter", "filter_means", particle_inputs, particle_reference, particle_check, (1, 2)),
]


def close(got, want, rtol=2e-4):
    """None when every output matches: equal for integers, else within rtol of the
    largest magnitude of that output."""
    if sorted(got) != sorted(want):
        return f"outputs {sorted(got)}, the reference gives {sorted(want)}"
    for name, w in want.items():
        g = np.asarray(got[name])
        w = np.asarray(w)
        if g.shape != w.shape:
            return f"{name}: shape {g.shape}, the reference {w.shape}"
        if np.issubdtype(w.dtype, np.integer):
            if not np.array_equal(g, w):
                return f"{name}: {g.tolist()} differs from the reference {w.tolist()}"
        elif w.size:
            err = np.max(np.abs(g - w)) / max(np.max(np.abs(w)), 1e-30)
            if not err < rtol:
                return f"{name}: off by {err:.1e} relative to its largest value"
    return None


def main():
    report = lib.Report("practitioner programs")
    with tempfile.TemporaryDirectory(prefix="sg_practitioner_") as tmp:
        graphs = {}
        for program, entry, make_inputs, reference, check, seeds in CASES:
            path = os.path.join(CORPUS, program + ".py")
            if program not in graphs:
                graphs[program] = os.path.join(tmp, program + ".sgraph")
                try:
                    lib.compile_program(path, graphs[program])
                except lib.E2EError as e:
                    graphs[program] = e
            if isinstance(graphs[program], Exception):
                report.fail(f"{program}.{entry}: compiles unchanged", str(graphs[program]))
                continue
            module = lib.load_eager_module(path)
            for seed in seeds:
                case = f"{program}.{entry} seed {seed}"
                inputs = make_inputs(seed)
                want = reference(inputs)
                proc, out_dir = lib.run_graph(graphs[program], entry, inputs, os.path.join(tmp, case.replace(" ", "_")))
                if proc.returncode != 0:
                    report.fail(case, lib.describe_result(proc))
                    continue
                got = lib.load_outputs(out_dir, list(want))
                why = check(got, want) if check else close(got, want)
                report.check(f"{case}: compiled matches the NumPy reference", why is None, why)
                eager = lib.eager_outputs(getattr(module, entry)(**{k: v.copy() for k, v in inputs.items()}))
                why = check(eager, want) if check else close(eager, want)
                report.check(f"{case}: eager matches the NumPy reference", why is None, why)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
