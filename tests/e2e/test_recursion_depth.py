"""Recursion depth at run time (SPEC.md §6, §9): graph recursion is bounded by
the number of active Call frames (graph-run --max-depth, default 10,000).
Exceeding the limit exits 3 with a message naming the function and the depth,
never a crash; a depth within the limit runs and matches eager mode."""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

PROGRAM = '''import stagegraph as sg


def countdown(n):
    if n <= 0:
        r = n
    else:
        r = countdown(n - 1) + 1
    return r


@sg.function
def main(n: sg.i64):
    return countdown(n)
'''

# An entry point that calls itself: the recursive graph function is a second
# specialisation of `down`, and the message still names `down`.
SELF_PROGRAM = '''import stagegraph as sg


@sg.function
def down(n: sg.i64) -> sg.i64:
    if n < 1:
        return n * 0
    return down(n - 1) + 1
'''


def compile_text(report, tmp, stem, text):
    """The graph of program `text` (written to tmp/stem.py), or None after a failure."""
    src = os.path.join(tmp, stem + ".py")
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    graph = os.path.join(tmp, stem + ".sgraph")
    try:
        lib.compile_program(src, graph)
    except lib.E2EError as e:
        report.fail(f"compile {stem}.py", str(e))
        return None
    return graph


def main():
    report = lib.Report("recursion depth")
    with tempfile.TemporaryDirectory() as tmp:
        graph = compile_text(report, tmp, "countdown", PROGRAM)
        if graph is None:
            return report.finish()

        def run(case, n, extra):
            return lib.run_graph(graph, "main", {"n": np.array(n, np.int64)}, os.path.join(tmp, case), extra)

        # countdown(n) keeps n + 1 Call frames active at its deepest.
        proc, out = run("within", 50, ["--max-depth", "51"])
        if report.check("depth within the limit runs", proc.returncode == 0, lib.describe_result(proc)):
            got = np.load(os.path.join(out, "output_0.npy"))
            report.check("result matches eager", int(got) == 50, f"got {got}, expected 50")

        proc, _ = run("boundary", 50, ["--max-depth", "50"])
        report.check("one frame too many exits 3", proc.returncode == 3, lib.describe_result(proc))

        proc, _ = run("beyond", 50, ["--max-depth", "20"])
        msg = proc.stderr or ""
        report.check("beyond the limit exits 3", proc.returncode == 3, lib.describe_result(proc))
        report.check("the message names the function", lib_names(msg, "countdown"), f"stderr: {msg.strip()!r}")
        report.check("the message names the depth", "20" in msg, f"stderr: {msg.strip()!r}")

        # The default limit allows 9,999 nested calls on the runtime's heap frame stack.
        proc, out = run("deep", 9998, [])
        if report.check("depth 9,999 with the default limit runs", proc.returncode == 0, lib.describe_result(proc)):
            got = np.load(os.path.join(out, "output_0.npy"))
            report.check("deep result", int(got) == 9998, f"got {got}, expected 9998")

        proc, _ = run("default", 10000, [])
        report.check("the default limit of 10,000 frames is enforced", proc.returncode == 3,
                     lib.describe_result(proc))

        graph = compile_text(report, tmp, "down", SELF_PROGRAM)
        if graph is None:
            return report.finish()
        proc = lib.run_graph(graph, "down", {"n": np.array(40, np.int64)}, os.path.join(tmp, "self"),
                             ["--max-depth", "10"])[0]
        msg = proc.stderr or ""
        report.check("a self-calling entry beyond the limit exits 3", proc.returncode == 3, lib.describe_result(proc))
        report.check("the message names the source function", "exceeded calling 'down'" in msg,
                     f"stderr: {msg.strip()!r}")
    return report.finish()


def lib_names(text, word):
    return f"'{word}'" in text or f" {word}" in text


if __name__ == "__main__":
    sys.exit(main())
