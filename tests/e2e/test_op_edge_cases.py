"""Op edge cases with expectations written by hand (op_edge_cases.py): integer
division by zero, overflow, NaN through max/argmax/sort/topk, ties in argsort and
topk, empty reductions, rounding, one_hot and take out of range.

Each case runs the compiled graph (graph-run) and eager mode and checks both
against the same literal values (dtype, shape, values; NaN where NaN is
expected), or, for an expected failure, the exit status, the words of the
message, the FILE:LINE: it points at, and the exception eager mode raises.
"""

import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402
import op_edge_cases as edge  # noqa: E402


def tag_line(source, tag):
    for number, line in enumerate(source.splitlines(), 1):
        if line.rstrip().endswith(f"# @{tag}"):
            return number
    raise lib.E2EError(f"no line tagged @{tag}")


def mismatch(name, expected, actual, approx=False):
    """None when `actual` is exactly `expected` (NaN matching NaN) or, with `approx`,
    within SPEC §1's tolerance (infinities and NaN still exact); else a message."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if approx:
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf
            return lib.compare(name, expected, actual)
    if actual.dtype != expected.dtype:
        return f"{name}: dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"{name}: shape {actual.shape}, expected {expected.shape}"
    same = np.array_equal(actual, expected, equal_nan=expected.dtype.kind == "f")
    if not same:
        return f"{name}: {actual.tolist()}, expected {expected.tolist()}"
    return None


def expected_outputs(expected):
    return expected if isinstance(expected, dict) else {"output_0": expected}


def check_error_message(proc, error, source, py_path):
    """Problems with a failed run's exit status and message (empty when right)."""
    problems = []
    if proc.returncode != error.exit_code:
        problems.append(f"{lib.describe_result(proc)}, expected exit {error.exit_code}")
    stderr = proc.stderr or ""
    line = tag_line(source, error.tag)
    where = f"{os.path.basename(py_path)}:{line}:"
    located = [ln for ln in stderr.splitlines() if where in ln and ": error:" in ln]
    if not located:
        problems.append(f"no '{where}COL: error:' line in stderr: {stderr.strip()[-300:]!r}")
    for word in error.words:
        if not re.search(re.escape(word), stderr, re.I):
            problems.append(f"the message lacks {word!r}: {stderr.strip()[-300:]!r}")
    return problems


def check_case(report, graph, module, source, py_path, case, work):
    name, entry, inputs, expected = case[:4]
    approx = case[4] if len(case) > 4 else set()
    # Compiled.
    proc, out_dir = lib.run_graph(graph, entry, inputs, work)
    if isinstance(expected, edge.Error):
        problems = check_error_message(proc, expected, source, py_path)
        report.check(f"{name} (compiled)", not problems, "; ".join(problems))
    elif proc.returncode != 0:
        report.fail(f"{name} (compiled)", f"graph-run {lib.describe_result(proc)}")
    else:
        want = expected_outputs(expected)
        try:
            actual = lib.load_outputs(out_dir, list(want))
            problems = [p for n, e in want.items() if (p := mismatch(n, e, actual[n], n in approx))]
        except lib.E2EError as e:
            problems = [str(e)]
        report.check(f"{name} (compiled)", not problems, "; ".join(problems))
    # Eager.
    fn = getattr(module, entry)
    try:
        result = fn(**{k: v.copy() for k, v in inputs.items()})
    except Exception as e:  # noqa: BLE001 - compared with the expected failure below
        if isinstance(expected, edge.Error) and (expected.eager is None or isinstance(e, expected.eager)):
            report.ok(f"{name} (eager)", f"{type(e).__name__}: {e}")
        else:
            report.fail(f"{name} (eager)", f"raised {type(e).__name__}: {e}")
        return
    if isinstance(expected, edge.Error):
        report.fail(f"{name} (eager)", f"returned {result!r}, expected {expected.eager.__name__}")
        return
    got = lib.eager_outputs(result)
    want = expected_outputs(expected)
    problems = [p for n, e in want.items() if (p := mismatch(n, e, got.get(n, np.array([])), n in approx))]
    if sorted(got) != sorted(want):
        problems.append(f"outputs {sorted(got)}, expected {sorted(want)}")
    report.check(f"{name} (eager)", not problems, "; ".join(problems))


def check_static_empty(report, work_root):
    """max over an axis that is empty at compile time: a compile-time error (SPEC §7)."""
    source = edge.STATIC_EMPTY_PROGRAM
    py_path = os.path.join(work_root, "static_empty.py")
    with open(py_path, "w", encoding="utf-8") as f:
        f.write(source)
    proc = lib.run_tool("graph-compile", [py_path, "-o", os.path.join(work_root, "static_empty.sgraph")])
    problems = check_error_message(proc, edge.Error(1, ["max", "zero-size"], "static_empty_max"), source, py_path)
    report.check("max of a statically empty axis is a compile-time error", not problems, "; ".join(problems))


def main():
    report = lib.Report("op edge cases")
    with tempfile.TemporaryDirectory(prefix="sg_opedge_") as work_root:
        py_path = os.path.join(work_root, "op_edge.py")
        with open(py_path, "w", encoding="utf-8") as f:
            f.write(edge.PROGRAM)
        graph = os.path.join(work_root, "op_edge.sgraph")
        try:
            lib.compile_program(py_path, graph)
            module = lib.load_eager_module(py_path)
        except lib.E2EError as e:
            report.fail("compile", str(e))
            return report.finish()
        for k, case in enumerate(edge.CASES):
            check_case(report, graph, module, edge.PROGRAM, py_path, case, os.path.join(work_root, f"case{k}"))
        check_static_empty(report, work_root)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
