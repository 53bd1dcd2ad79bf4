"""End to end: training on the runtime (SPEC §12).

1. examples/train_digits.py, compiled: `graph-run --steps 300` trains the MLP on
   scikit-learn's digits with every step on the runtime; its first 50 losses match
   eager mode's within 2e-3 relative (f32 rounding grows through Adam), the loss falls, `--save-variables` writes the
   trained state, and `predict` with `--load-variables` reaches >= 95% test accuracy.
2. Variables: a step's assignments are all read back by the next step (a counter
   and a running sum over --steps), a failing step stops graph-run before any save;
   a variables file that does not match (a missing name, another shape) is refused,
   naming the variable.
3. Refusals at compile time: assigning a variable inside a staged loop, or another
   structure, is a located error.
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


REFUSALS = {
    "in_loop": ("""
import stagegraph as sg

v = sg.variables(w=sg.zeros((2,)))


@sg.function
def f(x: sg.f32[2], n: sg.i64):
    for i in range(n):
        v.w = v.w + x
    return x
""", "is assigned inside a staged if, loop or function"),
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
        check_state(report, work)
        check_refusals(report, work)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
