"""End to end: every program in tests/programs (and the examples e2e_lib's
EXAMPLE_PROGRAMS names, from examples/) is compiled with graph-compile, run
with graph-run on random inputs, and compared with eager mode (SPEC.md §1).

For each program: its eager-mode demo (`python3 PROGRAM.py`) must run, it must
compile, and each entry point, under each symbolic-dim binding, must give the
eager result: the same output names, dtypes and shapes, and values within SPEC §1's
tolerance. SG_E2E_PROGRAMS=mlp,cnn runs only those programs.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402


def stem(py_path):
    return os.path.splitext(os.path.basename(py_path))[0]


def check_eager_demo(report, py_path, work):
    """Runs `python3 PROGRAM.py` in `work` (an example's demo writes its files there)."""
    name = stem(py_path)
    env = dict(os.environ)
    env["PYTHONPATH"] = lib.PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run([sys.executable, py_path], capture_output=True, text=True, env=env,
                              timeout=lib.TOOL_TIMEOUT_S, cwd=work)
    except subprocess.TimeoutExpired:
        report.fail(f"{name} eager demo", "timed out")
        return
    report.check(f"{name} eager demo", proc.returncode == 0,
                 f"python3 {name}.py exited {proc.returncode}: {proc.stderr.strip()[-400:]}")


def check_entry(report, py_path, graph, module, entry, options, work):
    program = stem(py_path)
    fn = getattr(module, entry)
    sig = lib.signature(fn)
    runs = int(options.get("runs", 1))
    for b, binding in enumerate(lib.bindings(sig, options)):
        for r in range(runs):
            check_run(report, graph, fn, sig, binding, lib.seed_for(program, entry, b, r), options,
                      f"{program}.{entry}", os.path.join(work, f"{entry}_{b}_{r}"), r if runs > 1 else None)


def check_run(report, graph, fn, sig, binding, seed, options, name, work, run):
    """One run of an entry (`name` is program.entry) on inputs drawn with `seed`."""
    dims = ",".join(f"{k}={v}" for k, v in binding.items())
    case = name + (f" [{dims}]" if dims else "") + (f" #{run}" if run is not None else "")
    entry = name.split(".", 1)[1]
    try:
        inputs = lib.make_inputs(sig, binding, seed, options)
        expected = lib.eager_outputs(fn(**{k: v.copy() for k, v in inputs.items()}))
        proc, out_dir = lib.run_graph(graph, entry, inputs, work)
        if proc.returncode != 0:
            raise lib.E2EError(f"graph-run {lib.describe_result(proc)}")
        actual = lib.load_outputs(out_dir, list(expected))
        problems = [p for n in expected if (p := lib.compare(n, expected[n], actual[n]))]
        if problems:
            raise lib.E2EError("; ".join(problems))
        report.ok(case, ", ".join(f"{n}: {e.dtype}{list(e.shape)}" for n, e in expected.items()))
    except lib.E2EError as e:
        report.fail(case, str(e))
    except Exception as e:  # an eager-mode failure is a failed case, not a crash of the run
        report.fail(case, f"{type(e).__name__}: {e}")


def check_program(report, py_path, work_root):
    name = stem(py_path)
    work = os.path.join(work_root, name)
    os.makedirs(work)
    demo = os.path.join(work, "demo")
    os.makedirs(demo)
    check_eager_demo(report, py_path, demo)
    graph = os.path.join(work, "model.sgraph")
    try:
        options = lib.program_options(py_path)
        entries = lib.entry_names(py_path)
        if not entries:
            raise lib.E2EError("no @sg.function entry point")
        if "weights" in options:
            # `# e2e: weights=FUNCTION`: the program's FUNCTION() gives the tensors its
            # sg.weight calls read; both modes load them from one safetensors file.
            module = lib.load_eager_module(py_path)
            weights = os.path.join(work, "weights.safetensors")
            lib.write_safetensors(weights, getattr(module, options["weights"])())
            lib.compile_program(py_path, graph, ["--weights", weights])
            sys.modules["stagegraph"].load_weights(weights)
        else:
            lib.compile_program(py_path, graph)
            module = lib.load_eager_module(py_path)
    except lib.E2EError as e:
        report.fail(f"{name} compile", str(e))
        return
    except Exception as e:
        report.fail(f"{name} eager import", f"{type(e).__name__}: {e}")
        return
    for entry in entries:
        check_entry(report, py_path, graph, module, entry, options, work)


def main():
    report = lib.Report("end-to-end programs")
    programs = lib.list_programs()
    if not programs:
        print("no programs found in", lib.PROGRAMS_DIR, "(SG_E2E_PROGRAMS:", os.environ.get("SG_E2E_PROGRAMS"), ")")
        return 1
    with tempfile.TemporaryDirectory(prefix="sg_e2e_") as work_root:
        for py_path in programs:
            check_program(report, py_path, work_root)
    status = report.finish()
    failed = {case.replace(" ", ".").split(".")[0] for case, _ in report.failed}
    names = [stem(p) for p in programs]
    print("programs passing end to end:", ", ".join(n for n in names if n not in failed) or "none")
    print("programs with failures:     ", ", ".join(n for n in names if n in failed) or "none")
    return status


if __name__ == "__main__":
    sys.exit(main())
