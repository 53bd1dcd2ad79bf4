"""End to end: every program in tests/programs gives eager mode's results both at
-O0 (no passes) and at -O2 (every pass), and -O2 fuses what it should.

For each program, both graphs run each entry under each symbolic-dim binding on
the same inputs, and each result is compared with eager mode within SPEC §1's
tolerance. The -O2 graph must not be larger than the -O0 one (folding never grows
the file). Then the examples: -O2 on examples/mlp.py has fully_connected nodes,
on examples/cnn.py conv2d_bias nodes, and -O0 has neither.
SG_E2E_PROGRAMS=mlp,cnn runs only those programs.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

LEVELS = ("-O0", "-O2")


def stem(py_path):
    return os.path.splitext(os.path.basename(py_path))[0]


def check_program(report, py_path, work_root):
    name = stem(py_path)
    work = os.path.join(work_root, name)
    os.makedirs(work)
    graphs = {level: os.path.join(work, f"model{level}.sgraph") for level in LEVELS}
    try:
        options = lib.program_options(py_path)
        entries = lib.entry_names(py_path)
        extra = []
        if "weights" in options:
            # `# e2e: weights=FUNCTION`, as in test_programs: one safetensors file for
            # the compiler and eager mode.
            module = lib.load_eager_module(py_path)
            weights = os.path.join(work, "weights.safetensors")
            lib.write_safetensors(weights, getattr(module, options["weights"])())
            extra = ["--weights", weights]
            sys.modules["stagegraph"].load_weights(weights)
        for level, graph in graphs.items():
            lib.compile_program(py_path, graph, [level] + extra)
        if not extra:
            module = lib.load_eager_module(py_path)
    except lib.E2EError as e:
        report.fail(f"{name} compile", str(e))
        return
    except Exception as e:
        report.fail(f"{name} eager import", f"{type(e).__name__}: {e}")
        return
    sizes = {level: os.path.getsize(g) for level, g in graphs.items()}
    report.check(f"{name} size", sizes["-O2"] <= sizes["-O0"],
                 f"-O2 graph is {sizes['-O2']} bytes, -O0 {sizes['-O0']}", f"{sizes['-O0']} -> {sizes['-O2']} bytes")
    for entry in entries:
        fn = getattr(module, entry)
        sig = lib.signature(fn)
        for b, binding in enumerate(lib.bindings(sig, options)):
            dims = ",".join(f"{k}={v}" for k, v in binding.items())
            case = f"{name}.{entry}" + (f" [{dims}]" if dims else "")
            try:
                inputs = lib.make_inputs(sig, binding, lib.seed_for(name, entry, b, 0), options)
                expected = lib.eager_outputs(fn(**{k: v.copy() for k, v in inputs.items()}))
            except Exception as e:  # an eager-mode failure is a failed case, not a crash of the run
                report.fail(case, f"eager: {type(e).__name__}: {e}")
                continue
            for level, graph in graphs.items():
                try:
                    proc, out_dir = lib.run_graph(graph, entry, inputs, os.path.join(work, f"{entry}_{b}{level}"))
                    if proc.returncode != 0:
                        raise lib.E2EError(f"graph-run {lib.describe_result(proc)}")
                    actual = lib.load_outputs(out_dir, list(expected))
                    problems = [p for n in expected if (p := lib.compare(n, expected[n], actual[n]))]
                    if problems:
                        raise lib.E2EError("; ".join(problems))
                    report.ok(f"{case} {level}")
                except lib.E2EError as e:
                    report.fail(f"{case} {level}", str(e))


def dumped_ops(py_path, level, work):
    """The op names of `graph-compile --dump-ir` at `level`."""
    out = os.path.join(work, f"{stem(py_path)}{level}.sgraph")
    proc = lib.run_tool("graph-compile", [py_path, "-o", out, level, "--dump-ir"])
    if proc.returncode != 0:
        raise lib.E2EError(f"graph-compile {level} {lib.describe_result(proc)}")
    ops = []
    for line in proc.stdout.splitlines():
        if " = " in line and "(" in line and not line.startswith(("func", "entry")):
            rhs = line.split(" = ", 1)[1]
            ops.append(rhs.split("(", 1)[0].strip())
    return ops


def check_fusion(report, work_root):
    examples = os.path.join(lib.SOURCE_DIR, "examples")
    for program, fused, count in (("mlp", "fully_connected", 3), ("cnn", "conv2d_bias", 2)):
        case = f"examples/{program}.py fuses {fused}"
        try:
            py_path = os.path.join(examples, f"{program}.py")
            o0 = dumped_ops(py_path, "-O0", work_root)
            o2 = dumped_ops(py_path, "-O2", work_root)
            report.check(case, o2.count(fused) == count and fused not in o0,
                         f"-O2 ops {o2}, -O0 ops {o0}", f"{len(o0)} -> {len(o2)} nodes")
        except lib.E2EError as e:
            report.fail(case, str(e))


def main():
    report = lib.Report("optimization levels")
    programs = lib.list_programs()
    with tempfile.TemporaryDirectory(prefix="sg_opt_") as work_root:
        for py_path in programs:
            check_program(report, py_path, work_root)
        check_fusion(report, work_root)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
