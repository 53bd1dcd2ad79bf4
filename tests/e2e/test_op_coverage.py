"""Op coverage, end to end: every op of the op table, for every dtype its rule
accepts, runs compiled and eager with equal results (SPEC.md §1, §3, §7).

The op list and the accepted dtypes come from `graph-inspect --op-table`, which
asks the op rules themselves; the cases come from op_cases.py. The test fails,
listing them, for every op x dtype without a case (outside op_cases.EXEMPT) and
for table entries naming ops that no longer exist. Each case is one generated
program: compiled with graph-compile, checked to hold the op (graph-inspect) and
to draw one Graphviz node per graph node (graph-inspect --dot), then run by
graph-run under each binding of its symbolic batch dim (0 among them) and
compared with eager mode.

SG_OP_CASES=add,sum:i32 runs only those ops (or op:dtype pairs).
"""

import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402
import op_cases  # noqa: E402

WORKERS = 2


def op_table():
    """{op: [dtypes]} from graph-inspect --op-table, in table order."""
    proc = lib.run_tool("graph-inspect", ["--op-table"])
    if proc.returncode != 0:
        raise lib.E2EError(f"graph-inspect --op-table failed, {lib.describe_result(proc)}")
    table = {}
    for line in proc.stdout.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _role, *dtypes = line.split()
        table[name] = [d for d in dtypes if d != "-"]
    if not table:
        raise lib.E2EError("graph-inspect --op-table printed no ops")
    return table


def check_dot(graph):
    """graph-inspect --dot draws one box per graph node, one cluster per function and
    one dashed edge per If/While/Call function reference. Returns an error or None."""
    _, nodes, edges = lib.inspect_graph(graph)
    proc = lib.run_tool("graph-inspect", [graph, "--dot"])
    if proc.returncode != 0:
        return f"graph-inspect --dot failed, {lib.describe_result(proc)}"
    dot = proc.stdout
    if not dot.startswith("digraph") or not dot.rstrip().endswith("}"):
        return "graph-inspect --dot did not print a digraph"
    drawn = len(re.findall(r"^    f\d+_n\d+ \[label=", dot, re.M))
    clusters = len(re.findall(r"^  subgraph cluster_\d+ \{", dot, re.M))
    dashed = len(re.findall(r"^  f\d+_n\d+ -> f\d+ \[style=dashed", dot, re.M))
    if drawn != sum(nodes.values()):
        return f"--dot drew {drawn} nodes, the graph has {sum(nodes.values())}"
    if clusters != len(nodes):
        return f"--dot drew {clusters} clusters for {len(nodes)} functions"
    if dashed != edges:
        return f"--dot drew {dashed} If/While/Call edges, graph-inspect lists {edges}"
    return None


def run_case(op, dtype, program, work_root):
    """Compiles and runs one op x dtype case; returns [(name, error or None, detail)]."""
    name = f"{op}[{dtype}]"
    work = os.path.join(work_root, f"{op}_{dtype}")
    os.makedirs(work)
    py_path = os.path.join(work, f"{op}_{dtype}.py")
    with open(py_path, "w", encoding="utf-8") as f:
        f.write(program.source(op, dtype))
    graph = os.path.join(work, "case.sgraph")
    results = []
    try:
        lib.compile_program(py_path, graph)
        ops, _, _ = lib.inspect_graph(graph)
        wanted = program.ops if program.ops is not None else ({op} if op not in op_cases.FOLDED else set())
        missing = sorted(w for w in wanted if w not in ops)
        if missing:
            raise lib.E2EError(f"the compiled graph has no {', '.join(missing)} node (ops: {', '.join(sorted(ops))})")
        if problem := check_dot(graph):
            raise lib.E2EError(problem)
        module = lib.load_eager_module(py_path)
        options = lib.program_options(py_path)
        sig = lib.signature(module.case)
    except lib.E2EError as e:
        return [(f"{name} compile", str(e), "")]
    except Exception as e:  # noqa: BLE001 - an eager import failure fails the case
        return [(f"{name} eager import", f"{type(e).__name__}: {e}", "")]
    for b, binding in enumerate(lib.bindings(sig, options)):
        dims = ",".join(f"{k}={v}" for k, v in binding.items())
        case = f"{name} [{dims}]"
        try:
            inputs = lib.make_inputs(sig, binding, lib.seed_for("op_coverage", op, dtype, b), options)
            expected = lib.eager_outputs(module.case(**{k: v.copy() for k, v in inputs.items()}))
            proc, out_dir = lib.run_graph(graph, "case", inputs, os.path.join(work, f"b{b}"))
            if proc.returncode != 0:
                raise lib.E2EError(f"graph-run {lib.describe_result(proc)}")
            actual = lib.load_outputs(out_dir, list(expected))
            with np.errstate(invalid="ignore"):  # inf - inf where both sides are inf
                problems = [p for n in expected if (p := lib.compare(n, expected[n], actual[n]))]
            if problems:
                raise lib.E2EError("; ".join(problems))
            results.append((case, None, f"{len(expected)} outputs"))
        except lib.E2EError as e:
            results.append((case, str(e), ""))
        except Exception as e:  # noqa: BLE001 - an eager-mode failure fails the case
            results.append((case, f"eager: {type(e).__name__}: {e}", ""))
    return results


def selected(op, dtype):
    wanted = os.environ.get("SG_OP_CASES")
    if not wanted:
        return True
    items = {w.strip() for w in wanted.split(",") if w.strip()}
    return op in items or f"{op}:{dtype}" in items


def check_control_flow_dot(report, work_root):
    """--dot on programs with If, While and Call nodes (their function clusters)."""
    for program in ("staged_if.py", "staged_loops.py", "recursion_fib.py"):
        py_path = os.path.join(lib.PROGRAMS_DIR, program)
        graph = os.path.join(work_root, program.replace(".py", ".sgraph"))
        try:
            lib.compile_program(py_path, graph)
            problem = check_dot(graph)
        except lib.E2EError as e:
            problem = str(e)
        report.check(f"--dot {program}", problem is None, problem or "")


def main():
    start = time.monotonic()
    report = lib.Report("op coverage")
    try:
        table = op_table()
    except lib.E2EError as e:
        report.fail("op table", str(e))
        return report.finish()
    stale = sorted((set(op_cases.GENERATORS) | set(op_cases.EXEMPT) | op_cases.FOLDED) - set(table))
    report.check("case table names only ops of the op table", not stale,
                 f"op_cases.py names ops the op table lacks: {', '.join(stale)}")
    no_dtype = sorted(op for op, dtypes in table.items() if not dtypes)
    report.check("every op accepts some dtype", not no_dtype,
                 f"graph-inspect --op-table found no accepted dtype for: {', '.join(no_dtype)}")

    plan, uncovered, exempted = [], [], []
    for op, dtypes in table.items():
        for dtype in dtypes:
            if op in op_cases.EXEMPT:
                exempted.append(f"{op}[{dtype}]")
                continue
            program = op_cases.program_for(op, dtype)
            if program is None:
                uncovered.append(f"{op}[{dtype}]")
            elif selected(op, dtype):
                plan.append((op, dtype, program))
    report.check("every op x allowed dtype has a case", not uncovered,
                 f"{len(uncovered)} op x dtype without a case: {', '.join(uncovered)}")

    covered = 0
    with tempfile.TemporaryDirectory(prefix="sg_opcov_") as work_root:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            futures = [pool.submit(run_case, op, dtype, program, work_root) for op, dtype, program in plan]
            for future in futures:
                results = future.result()
                for case, error, detail in results:
                    if error is None:
                        report.ok(case, detail)
                    else:
                        report.fail(case, error)
                covered += all(error is None for _, error, _ in results)
        check_control_flow_dot(report, work_root)

    status = report.finish()
    print(f"\nop x dtype cases: {covered} of {len(plan)} pass compiled == eager "
          f"({len(table)} ops in the op table; exempt: {', '.join(sorted(op_cases.EXEMPT)) or 'none'}, "
          f"{len(exempted)} op x dtype)")
    if op_cases.KNOWN_ISSUES:
        print("known compiler issues (reported; the parts of cases that hit them are held back):")
        for key, why in op_cases.KNOWN_ISSUES.items():
            print(f"  {key}: {why}")
    print(f"time: {time.monotonic() - start:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
