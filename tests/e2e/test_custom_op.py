"""Custom ops (SPEC §7), the program's side: sg.custom_op in eager mode runs the
declared function and checks its declared result; graph-compile stages the result
rule at compile time (its asserts are compile errors at their line, its symbolic
dims are kept) and records `custom` nodes naming the op; graph-run, which
registers no kernels, refuses the graph naming the op. The runtime's registration
and runs are tests/unit/runtime/custom_op_test.cc.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

PROGRAM = '''"""custom ops"""
import stagegraph as sg


def swish_eager(x):
    return x * sg.sigmoid(x)


def swish_result(x):
    return x.dtype, x.shape


def project_eager(a, b):
    return a @ b


def project_result(a, b):
    assert a.shape[-1] == b.shape[0], "project: inner dims differ"
    return sg.f32, (a.shape[0], b.shape[1])


swish = sg.custom_op("my_ns.swish", fn=swish_eager, result=swish_result)
project = sg.custom_op("my_ns.project", fn=project_eager, result=project_result)


@sg.function
def main(x: sg.f32["N", 3], w: sg.f32[3, 4]):
    h = swish(x) + 1.0
    return h, project(h, w)
'''

BAD_CALL = '''

@sg.function
def bad(x: sg.f32["N", 3], v: sg.f32[5, 4]):
    return project(x, v)
'''

WRONG_FN = '''"""a custom op whose eager function disagrees with its rule"""
import stagegraph as sg


def eager(x):
    return x[0]


def rule(x):
    return x.dtype, x.shape


op = sg.custom_op("my_ns.wrong", fn=eager, result=rule)


@sg.function
def main(x: sg.f32[2, 3]):
    return op(x)
'''


def write(work, name, text):
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def main():
    report = lib.Report("custom ops")
    with tempfile.TemporaryDirectory(prefix="sg_custom_") as work:
        py = write(work, "custom.py", PROGRAM)
        module = lib.load_eager_module(py)
        x = np.array([[-2.0, 0.0, 1.5], [3.0, -0.5, 0.25]], np.float32)
        w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
        h, p = module.main(x=x, w=w)
        want_h = x / (1 + np.exp(-x)) + 1
        report.check("eager mode runs fn", np.allclose(h, want_h, rtol=1e-6) and np.allclose(p, want_h @ w, rtol=1e-5)
                     and h.dtype == np.float32 and p.shape == (2, 4), f"got {h} and {p}")

        graph = os.path.join(work, "custom.sgraph")
        try:
            lib.compile_program(py, graph)
            ops, _, _ = lib.inspect_graph(graph)
            report.check("compiled graph records custom nodes", ops.get("custom") == 2, f"ops {ops}")
        except lib.E2EError as e:
            report.fail("compile", str(e))

        inputs = {"x": x, "w": w}
        proc, _ = lib.run_graph(graph, "main", inputs, os.path.join(work, "run"))
        report.check("graph-run refuses a custom op without a kernel",
                     proc.returncode != 0 and "custom op 'my_ns.swish'" in proc.stderr
                     and "no registered kernel" in proc.stderr,
                     f"exit {proc.returncode}, stderr {proc.stderr.strip()!r}")

        bad = write(work, "bad.py", PROGRAM + BAD_CALL)
        proc = lib.run_tool("graph-compile", [bad, "-o", os.path.join(work, "bad.sgraph"), "--entry", "bad"])
        report.check("the result rule checks shapes at compile time",
                     proc.returncode == 1 and "project: inner dims differ" in proc.stderr and "bad.py:" in proc.stderr,
                     f"exit {proc.returncode}, stderr {proc.stderr.strip()!r}")

        wrong = lib.load_eager_module(write(work, "wrong.py", WRONG_FN))
        try:
            wrong.main(x=np.zeros((2, 3), np.float32))
            report.fail("eager mode checks fn against the rule", "no error")
        except TypeError as e:
            report.check("eager mode checks fn against the rule", "my_ns.wrong" in str(e) and "f32[3]" in str(e), str(e))

        env = dict(os.environ, PYTHONPATH=lib.PYTHON_DIR)
        proc = subprocess.run([sys.executable, "-c", "import stagegraph as sg; sg.custom_op('', fn=abs, result=abs)"],
                              capture_output=True, text=True, env=env, timeout=lib.TOOL_TIMEOUT_S)
        report.check("an empty name is refused", proc.returncode != 0 and "non-empty string" in proc.stderr,
                     proc.stderr.strip()[-300:])
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
