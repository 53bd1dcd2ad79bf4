"""End to end: training on the runtime (SPEC §12).

1. examples/train_digits.py, compiled: `graph-run --steps 300` trains the MLP on
   scikit-learn's digits with every step on the runtime; its first 50 losses match
   eager mode's within 2e-3 relative (f32 rounding grows through Adam), the loss falls, `--save-variables` writes the
   trained state, and `predict` with `--load-variables` reaches >= 95% test accuracy.
2. examples/train_tree_lstm.py, compiled: a TreeLSTM trained by recursion, one
   generated arithmetic expression per step (the tree's shape and root are inputs).
   Its first 30 losses match eager mode's, the mean loss of the last 200 steps is
   under 0.4x that of the first 200, and `predict` on 300 held-out expressions has a
   squared error under 0.25x their variance (the error of predicting their mean).
3. examples/train_char_rnn.py, compiled: a GRU character model trained through
   windows whose length (the While's trip count) is an input, drawn per step. Its
   first 20 losses match eager mode's, the mean of its last 50 is under 1.9
   nats/char (from ln 39 = 3.66), and `evaluate` on held-out text is under 2.4
   nats/char and under the held-out text's cross-entropy under the training text's
   character frequencies (2.97).
4. Variables: a step's assignments are all read back by the next step (a counter
   and a running sum over --steps), and not by the step itself; a failing step stops
   graph-run before any save; a variables file that does not match (a missing name,
   another shape) is refused, naming the variable.
5. Variables assigned inside staged control flow: an update under a staged `if`
   keeps the params on a NaN loss and equals one plain step otherwise; a staged loop
   of S Adam steps on locals, assigning the variables in each iteration, gives the
   variables of S runs of one step, bit for bit; a run whose loop fails an assert
   after some updates saves nothing.
6. Refusals at compile time: assigning a variable inside a staged call (a recursive
   function) or inside a function sg.grad differentiates, another structure, shape or
   dtype kind, also inside a staged loop or branch, is a located error.
"""

import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

STEPS = 300
MATCHED = 50


def step_values(stdout, name):
    """{step: first value} from graph-run --steps lines "step I: NAME = ..."."""
    out = {}
    for m in re.finditer(rf"^step (\d+): {re.escape(name)} = \[?(-?[0-9.eE+-]+|nan|inf)", stdout, re.M):
        out[int(m.group(1))] = float(m.group(2))
    return out


def check_digits(report, work):
    py = os.path.join(lib.EXAMPLES_DIR, "train_digits.py")
    graph = os.path.join(work, "digits.sgraph")
    lib.compile_program(py, graph)
    module = lib.load_eager_module(py)
    x_train, y_train, x_test, y_test = module.dataset()
    xb, yb = module.batches(x_train, y_train, STEPS)
    saved = os.path.join(work, "digits.safetensors")
    proc, _ = lib.run_graph(graph, "train_step", {"x": xb, "y": yb}, os.path.join(work, "train"),
                            ["--steps", str(STEPS), "--save-variables", saved])
    report.check("digits: graph-run --steps trains", proc.returncode == 0, lib.describe_result(proc))
    losses = step_values(proc.stdout, "output_0")
    report.check("digits: every step printed", len(losses) == STEPS, f"{len(losses)} steps printed")
    eager = [float(np.asarray(module.train_step(xb[i], yb[i]))) for i in range(MATCHED)]
    worst = max((abs(losses.get(i, np.nan) - eager[i]) / max(1.0, abs(eager[i])) for i in range(MATCHED)),
                default=np.inf)
    report.check(f"digits: the first {MATCHED} losses match eager mode's", worst < 2e-3, f"worst relative {worst:.2e}")
    report.check("digits: the loss falls", losses and losses.get(STEPS - 1, 9) < 0.3 * losses.get(0, 0),
                 f"first {losses.get(0)}, last {losses.get(STEPS - 1)}")
    proc, out = lib.run_graph(graph, "predict", {"x": x_test}, os.path.join(work, "predict"),
                              ["--load-variables", saved])
    report.check("digits: predict from the saved variables", proc.returncode == 0, lib.describe_result(proc))
    if proc.returncode == 0:
        accuracy = float(np.mean(np.load(os.path.join(out, "output_0.npy")) == y_test))
        report.check("digits: test accuracy >= 95%", accuracy >= 0.95, f"accuracy {accuracy:.3f}")
        print(f"digits: {STEPS} steps, loss {losses.get(0):.3f} -> {losses.get(STEPS - 1):.3f}, "
              f"test accuracy {accuracy:.3f}")


def worst_relative(losses, eager):
    """The largest |runtime - eager| / max(1, |eager|) over the eager steps."""
    return max((abs(losses.get(i, np.nan) - e) / max(1.0, abs(e)) for i, e in enumerate(eager)), default=np.inf)


def window_mean(losses, first, last):
    values = [losses[i] for i in range(first, last) if i in losses]
    return float(np.mean(values)) if len(values) == last - first else np.nan


TREE_MATCHED = 30
TREE_WINDOW = 200
TREE_HELD_OUT = 300


def check_tree_lstm(report, work):
    py = os.path.join(lib.EXAMPLES_DIR, "train_tree_lstm.py")
    graph = os.path.join(work, "tree_lstm.sgraph")
    lib.compile_program(py, graph)
    module = lib.load_eager_module(py)
    steps = module.STEPS
    names = ("root", "left", "right", "tokens", "target")
    data = module.dataset(steps)
    sizes = {int(r) + 1 for r in data["root"]}
    report.check("tree_lstm: the trees differ in size", len(sizes) > 3, f"node counts {sorted(sizes)}")
    saved = os.path.join(work, "tree_lstm.safetensors")
    proc, _ = lib.run_graph(graph, "train_step", {n: data[n] for n in names}, os.path.join(work, "tree_train"),
                            ["--steps", str(steps), "--save-variables", saved])
    report.check("tree_lstm: graph-run --steps trains", proc.returncode == 0, lib.describe_result(proc))
    losses = step_values(proc.stdout, "output_0")
    report.check("tree_lstm: every step printed", len(losses) == steps, f"{len(losses)} steps printed")
    eager = [float(np.asarray(module.train_step(*(data[n][i] for n in names)))) for i in range(TREE_MATCHED)]
    worst = worst_relative(losses, eager)
    report.check(f"tree_lstm: the first {TREE_MATCHED} losses match eager mode's", worst < 2e-3,
                 f"worst relative {worst:.2e}")
    first = window_mean(losses, 0, TREE_WINDOW)
    last = window_mean(losses, steps - TREE_WINDOW, steps)
    report.check(f"tree_lstm: the mean loss of the last {TREE_WINDOW} steps < 0.4x the first {TREE_WINDOW}'s",
                 last < 0.4 * first, f"first {first:.4f}, last {last:.4f}")
    test = module.dataset(TREE_HELD_OUT, seed=1)
    proc, _ = lib.run_graph(graph, "predict", {n: test[n] for n in names[:-1]}, os.path.join(work, "tree_predict"),
                            ["--steps", str(TREE_HELD_OUT), "--load-variables", saved])
    report.check("tree_lstm: predict from the saved variables", proc.returncode == 0, lib.describe_result(proc))
    predicted = step_values(proc.stdout, "output_0")
    values = test["target"] * module.SCALE
    got = np.array([predicted.get(i, np.nan) for i in range(TREE_HELD_OUT)])
    error = float(np.mean((got - values) ** 2))
    report.check("tree_lstm: held-out squared error < 0.25x the values' variance",
                 error < 0.25 * float(np.var(values)), f"error {error:.3f}, variance {np.var(values):.3f}")
    print(f"tree_lstm: {steps} steps, mean loss of {TREE_WINDOW} steps {first:.4f} -> {last:.4f}; held-out "
          f"squared error {error:.2f} (variance {np.var(values):.2f}), rounded exactly "
          f"{np.mean(np.round(got) == values):.0%}")


RNN_MATCHED = 20
RNN_WINDOW = 50
RNN_HELD_OUT = 20


def check_char_rnn(report, work):
    py = os.path.join(lib.EXAMPLES_DIR, "train_char_rnn.py")
    graph = os.path.join(work, "char_rnn.sgraph")
    lib.compile_program(py, graph)
    module = lib.load_eager_module(py)
    steps = module.STEPS
    train, test = module.dataset()
    chars, length = module.batches(train, steps)
    report.check("char_rnn: the windows differ in length", len(set(length.tolist())) > 10,
                 f"lengths {sorted(set(length.tolist()))}")
    saved = os.path.join(work, "char_rnn.safetensors")
    proc, _ = lib.run_graph(graph, "train_step", {"chars": chars, "length": length}, os.path.join(work, "rnn_train"),
                            ["--steps", str(steps), "--save-variables", saved])
    report.check("char_rnn: graph-run --steps trains", proc.returncode == 0, lib.describe_result(proc))
    losses = step_values(proc.stdout, "output_0")
    report.check("char_rnn: every step printed", len(losses) == steps, f"{len(losses)} steps printed")
    eager = [float(np.asarray(module.train_step(chars[i], length[i]))) for i in range(RNN_MATCHED)]
    worst = worst_relative(losses, eager)
    report.check(f"char_rnn: the first {RNN_MATCHED} losses match eager mode's", worst < 2e-3,
                 f"worst relative {worst:.2e}")
    last = window_mean(losses, steps - RNN_WINDOW, steps)
    report.check(f"char_rnn: the mean loss of the last {RNN_WINDOW} steps < 1.9 nats/char", last < 1.9,
                 f"first {losses.get(0)}, last {RNN_WINDOW} {last:.4f}")
    test_chars, test_length = module.batches(test, RNN_HELD_OUT, seed=2)
    proc, _ = lib.run_graph(graph, "evaluate", {"chars": test_chars, "length": test_length},
                            os.path.join(work, "rnn_evaluate"),
                            ["--steps", str(RNN_HELD_OUT), "--load-variables", saved])
    report.check("char_rnn: evaluate from the saved variables", proc.returncode == 0, lib.describe_result(proc))
    held_out = window_mean(step_values(proc.stdout, "output_0"), 0, RNN_HELD_OUT)
    counts = np.bincount(train, minlength=module.V) + 1.0
    unigram = float(-np.mean(np.log(counts / counts.sum())[test]))
    report.check("char_rnn: held-out loss < 2.4 nats/char and under the character frequencies' cross-entropy",
                 held_out < 2.4 and held_out < unigram, f"held-out {held_out:.4f}, frequencies {unigram:.4f}")
    print(f"char_rnn: {steps} steps, loss {losses.get(0)} -> mean of the last {RNN_WINDOW} {last:.4f} nats/char "
          f"(ln {module.V} = {np.log(module.V):.3f}); held-out {held_out:.4f} (frequencies {unigram:.4f})")


STATE = """
import stagegraph as sg

acc = sg.variables(count=0, total=sg.zeros((2,)))


@sg.function
def add(x: sg.f32[2]):
    assert sg.all(x < 100.0), "x out of range"
    acc.total = acc.total + x
    acc.count += 1
    return {"total": acc.total, "count": acc.count}


@sg.function
def other(x: sg.f32[3]):
    return x
"""


def check_state(report, work):
    py = os.path.join(work, "state.py")
    with open(py, "w") as f:
        f.write(STATE)
    graph = os.path.join(work, "state.sgraph")
    lib.compile_program(py, graph)
    xs = np.arange(10, dtype=np.float32).reshape(5, 2)
    saved = os.path.join(work, "state.safetensors")
    proc, _ = lib.run_graph(graph, "add", {"x": xs}, os.path.join(work, "add"),
                            ["--steps", "7", "--save-variables", saved])
    report.check("state: --steps runs", proc.returncode == 0, lib.describe_result(proc))
    # Each run reads the values as they were when it started: total and count are
    # the sums of the steps before it.
    counts = step_values(proc.stdout, "count")
    totals = step_values(proc.stdout, "total")
    want = np.cumsum([xs[i % 5][0] for i in range(7)]) - np.array([xs[i % 5][0] for i in range(7)])
    report.check("state: each step reads the last step's assignments",
                 counts == {i: float(i) for i in range(7)} and all(abs(totals[i] - want[i]) < 1e-5 for i in range(7)),
                 f"counts {counts}, totals {totals}")
    from stagegraph import read_safetensors, write_safetensors
    tensors = read_safetensors(saved)
    report.check("state: the saved variables are named by path, with the last values",
                 sorted(tensors) == ["count", "total"] and int(tensors["count"]) == 7,
                 f"{ {k: np.asarray(v).tolist() for k, v in tensors.items()} }")
    bad_x = xs.copy()
    bad_x[2, 0] = 1000.0
    failed = os.path.join(work, "failed.safetensors")
    proc, _ = lib.run_graph(graph, "add", {"x": bad_x}, os.path.join(work, "fail"),
                            ["--steps", "5", "--save-variables", failed])
    report.check("state: a failing step stops the run, naming the step and the assert",
                 proc.returncode == 3 and "x out of range" in proc.stderr and "step 2 of 5" in proc.stderr
                 and not os.path.exists(failed), lib.describe_result(proc))
    missing = os.path.join(work, "missing.safetensors")
    write_safetensors(missing, {"total": np.zeros(2, np.float32)})
    reshaped = os.path.join(work, "reshaped.safetensors")
    write_safetensors(reshaped, {"total": np.zeros(3, np.float32), "count": np.array(1, np.int64)})
    for path, needle in ((missing, "no value for variable 'count'"), (reshaped, "variable 'total' is f32[3]")):
        proc, _ = lib.run_graph(graph, "add", {"x": xs[0]}, os.path.join(work, "load"), ["--load-variables", path])
        report.check(f"state: a mismatched file is refused ({needle})",
                     proc.returncode == 2 and needle in proc.stderr, lib.describe_result(proc))
    # Eager mode: the same semantics.
    module = lib.load_eager_module(py)
    first = module.add(xs[0])
    second = module.add(xs[1])
    try:
        module.add(bad_x[2])
        raised = False
    except AssertionError:
        raised = True
    third = module.add(xs[2])
    report.check("state: eager mode reads the start values and commits on success only",
                 raised and int(np.asarray(first["count"])) == 0 and int(np.asarray(second["count"])) == 1
                 and int(np.asarray(third["count"])) == 2, f"{first} {second} {third}")


FLOW = """
import stagegraph as sg
from stagegraph import optim

opt = optim.adam(lr=0.05)
params = {"w": sg.zeros((4,)), "b": sg.zeros(())}
state = sg.variables(params=params, opt=opt.init(params), step=0)


def loss_fn(p, x, y):
    return sg.mean((x @ p["w"] + p["b"] - y) ** 2)


def update(x, y):
    loss, g = sg.value_and_grad(loss_fn)(state.params, x, y)
    state.params, state.opt = opt.update(state.params, g, state.opt)
    state.step += 1
    return loss


@sg.function
def train_step(x: sg.f32["N", 4], y: sg.f32["N"]):
    return update(x, y)


@sg.function
def guarded_step(x: sg.f32["N", 4], y: sg.f32["N"]):
    loss, g = sg.value_and_grad(loss_fn)(state.params, x, y)
    if sg.logical_not(sg.isnan(loss)):
        state.params, state.opt = opt.update(state.params, g, state.opt)
        state.step += 1
    return loss


def local_step(p, o, x, y):
    loss, g = sg.value_and_grad(loss_fn)(p, x, y)
    p, o = opt.update(p, g, o)
    return loss, p, o


# Reads see the start of the run (SPEC §12), so a loop of steps works on locals and
# assigns the variables in each iteration: the last iteration's values are stored.
@sg.function
def train_epoch(xs: sg.f32["S", "N", 4], ys: sg.f32["S", "N"]):
    total = 0.0
    p, o = state.params, state.opt
    for i in range(xs.shape[0]):
        loss, p, o = local_step(p, o, xs[i], ys[i])
        state.params, state.opt = p, o
        state.step = state.step + (i + 1)
        total += loss
    return total / xs.shape[0]


@sg.function
def checked_epoch(xs: sg.f32["S", "N", 4], ys: sg.f32["S", "N"]):
    p, o = state.params, state.opt
    for i in range(xs.shape[0]):
        loss, p, o = local_step(p, o, xs[i], ys[i])
        state.params, state.opt = p, o
        state.step = state.step + (i + 1)
        assert sg.logical_not(sg.isnan(loss)), "loss is NaN"
    return state.step
"""


def same_variables(a, b):
    """Whether two saved variable files hold the same names and bits."""
    return sorted(a) == sorted(b) and all(np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes() for k in a)


def check_flow(report, work):
    from stagegraph import read_safetensors
    py = os.path.join(work, "flow.py")
    with open(py, "w") as f:
        f.write(FLOW)
    graph = os.path.join(work, "flow.sgraph")
    lib.compile_program(py, graph)
    rng = np.random.default_rng(7)
    steps = 6
    xs = rng.standard_normal((steps, 8, 4)).astype(np.float32)
    ys = (xs @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.25).astype(np.float32)

    def run(entry, inputs, name, extra=()):
        saved = os.path.join(work, name + ".safetensors")
        proc, _ = lib.run_graph(graph, entry, inputs, os.path.join(work, name), ["--save-variables", saved, *extra])
        report.check(f"flow: {name} runs", proc.returncode == 0, lib.describe_result(proc))
        return read_safetensors(saved) if proc.returncode == 0 else {}

    stepped = run("train_step", {"x": xs, "y": ys}, "stepped", ["--steps", str(steps)])
    epoch = run("train_epoch", {"xs": xs, "ys": ys}, "epoch")
    report.check(f"flow: a staged loop of {steps} Adam steps equals {steps} runs of one, bit for bit",
                 stepped and same_variables(stepped, epoch) and int(epoch["step"]) == steps
                 and int(epoch["opt.count"]) == steps,
                 f"step {epoch.get('step')}, w {epoch.get('params.w')} vs {stepped.get('params.w')}")
    one = run("train_step", {"x": xs[0], "y": ys[0]}, "one")
    guarded = run("guarded_step", {"x": xs[0], "y": ys[0]}, "guarded")
    report.check("flow: the staged if updates on a finite loss", one and same_variables(one, guarded),
                 f"{guarded.get('params.w')} vs {one.get('params.w')}")
    bad_y = ys[1].copy()
    bad_y[3] = np.nan
    first = os.path.join(work, "stepped.safetensors")
    skipped = run("guarded_step", {"x": xs[1], "y": bad_y}, "skipped", ["--load-variables", first])
    report.check("flow: the staged if keeps the variables on a NaN loss", stepped and same_variables(stepped, skipped),
                 f"{skipped.get('params.w')} vs {stepped.get('params.w')}, step {skipped.get('step')}")
    bad_xs = xs.copy()
    bad_xs[3, 0, 0] = np.nan
    failed = os.path.join(work, "failed.safetensors")
    proc, _ = lib.run_graph(graph, "checked_epoch", {"xs": bad_xs, "ys": ys}, os.path.join(work, "failed"),
                            ["--save-variables", failed])
    report.check("flow: an assert failing in the loop after three updates fails the run and saves nothing",
                 proc.returncode == 3 and "loss is NaN" in proc.stderr and not os.path.exists(failed),
                 lib.describe_result(proc))
    good = run("checked_epoch", {"xs": xs, "ys": ys}, "checked")
    report.check("flow: the loop with the assert gives the same variables when it passes",
                 stepped and same_variables(stepped, good), f"{good.get('params.w')} vs {stepped.get('params.w')}")
    # Eager mode: the loop of steps agrees with the runs of one step.
    module = lib.load_eager_module(py)
    module.train_epoch(xs, ys)
    w = np.asarray(module.state.params["w"])
    report.check("flow: eager mode's loop of steps reaches the compiled values",
                 stepped and np.allclose(w, stepped["params.w"], rtol=1e-4, atol=1e-5),
                 f"eager {w}, compiled {stepped.get('params.w')}")


REFUSALS = {
    "in_recursion": ("""
import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))


def down(x, n):
    if n > 0:
        v.w = x
        return down(x, n - 1)
    return x


@sg.function
def f(x: sg.f32[2], n: sg.i64):
    return down(x, n)
""", "variable 'w' is assigned inside a staged call"),
    "in_grad": ("""
import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))


def loss(w, x):
    v.w = w
    return sg.sum(w * x)


@sg.function
def f(x: sg.f32[2]):
    return sg.grad(loss)(v.w, x)
""", "variable 'w' is assigned inside a function that sg.grad or another transform stages"),
    "shape_in_loop": ("""
import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))


@sg.function
def f(x: sg.f32["N"], n: sg.i64):
    for i in range(n):
        v.w = x
    return x
""", "variable 'w' is f32[2]; the value assigned is f32[N]"),
    "kind_in_branch": ("""
import stagegraph as sg

v = sg.variables(step=0)


@sg.function
def f(x: sg.f32[2], t: sg.f32):
    if t > 0:
        v.step = sg.sum(x)
    return x
""", "variable 'step' is i64[]; the value assigned is f32[]: cast it with astype"),
    "structure": ("""
import stagegraph as sg

v = sg.variables(w=(sg.zeros((2,)), sg.zeros((3,))))


@sg.function
def f(x: sg.f32[2]):
    v.w = (x,)
    return x
""", "holds 2 tensors; the value assigned has 1"),
    "shape": ("""
import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))


@sg.function
def f(x: sg.f32[3]):
    v.w = x
    return x
""", "variable 'w' is f32[2]; the value assigned is f32[3]"),
}


def check_refusals(report, work):
    for name, (source, needle) in REFUSALS.items():
        py = os.path.join(work, f"refuse_{name}.py")
        with open(py, "w") as f:
            f.write(source)
        proc = lib.run_tool("graph-compile", [py, "-o", py[:-3] + ".sgraph"])
        report.check(f"refusal {name}", proc.returncode == 1 and needle in proc.stderr and f"refuse_{name}.py:" in
                     proc.stderr, lib.describe_result(proc))


def main():
    report = lib.Report("training")
    with tempfile.TemporaryDirectory(prefix="sg_train_") as work:
        check_digits(report, work)
        check_tree_lstm(report, work)
        check_char_rnn(report, work)
        check_state(report, work)
        check_flow(report, work)
        check_refusals(report, work)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
