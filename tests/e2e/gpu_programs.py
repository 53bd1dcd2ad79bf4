"""Every program in tests/programs run by graph-run on a device (--device cuda, or
with `--device test` the test device, host memory behind the device interface)
against the same graph on the CPU, on the same random inputs: f32/f16 outputs
within 1e-5 of the output's magnitude (max |gpu - cpu| <= 1e-5 * max |cpu|),
integer and bool outputs equal. Prints a table, one row per program.

Exit 77 (ctest: skipped) with a message when graph-run has no CUDA backend or the
machine no GPU (the test device is always there); tools/gpu-check.sh runs it on a GPU machine. SG_E2E_PROGRAMS=a,b
runs only those programs.
"""

import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

SKIP = 77
REL_TOL = 1e-5
DEVICE = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cuda"


def stem(py_path):
    return os.path.splitext(os.path.basename(py_path))[0]


def gpu_available(work):
    """None when graph-run runs on a GPU, else why not."""
    py = os.path.join(work, "probe.py")
    with open(py, "w") as f:
        f.write("import stagegraph as sg\n\n\n@sg.function\ndef probe(x: sg.f32[4]):\n    return x * 2.0 + 1.0\n")
    graph = os.path.join(work, "probe.sgraph")
    lib.compile_program(py, graph)
    proc, _ = lib.run_graph(graph, None, {"x": np.arange(4, dtype=np.float32)}, os.path.join(work, "probe"),
                            ["--device", DEVICE])
    if proc.returncode == 0:
        return None
    return (proc.stderr or "").strip().splitlines()[0] if proc.stderr.strip() else lib.describe_result(proc)


def compare(name, cpu, gpu):
    if cpu.dtype != gpu.dtype or cpu.shape != gpu.shape:
        return f"{name}: GPU gave {gpu.dtype}{list(gpu.shape)}, CPU {cpu.dtype}{list(cpu.shape)}", None
    if cpu.dtype.kind == "f":
        c = cpu.astype(np.float64)
        g = gpu.astype(np.float64)
        if not np.array_equal(np.isnan(c), np.isnan(g)):
            return f"{name}: NaNs differ", None
        finite = ~np.isnan(c)
        scale = float(np.max(np.abs(c[finite]))) if finite.any() else 0.0
        err = float(np.max(np.abs(c[finite] - g[finite]))) if finite.any() else 0.0
        rel = err / scale if scale > 0 else err
        if rel > REL_TOL:
            return f"{name}: max |gpu - cpu| = {err:.3g} is {rel:.3g} of the output's magnitude {scale:.3g}", rel
        return None, rel
    if not np.array_equal(cpu, gpu):
        return f"{name}: differs from the CPU at {np.argwhere(cpu != gpu)[0].tolist()}", None
    return None, 0.0


def run_program(py_path, work):
    """(cases, failures, max relative error, cpu seconds, gpu seconds) of one program."""
    options = lib.program_options(py_path)
    graph = os.path.join(work, "model.sgraph")
    if "weights" in options:
        module = lib.load_eager_module(py_path)
        weights = os.path.join(work, "weights.safetensors")
        lib.write_safetensors(weights, getattr(module, options["weights"])())
        lib.compile_program(py_path, graph, ["--weights", weights])
    else:
        lib.compile_program(py_path, graph)
        module = lib.load_eager_module(py_path)
    cases, failures, worst, t_cpu, t_gpu = 0, [], 0.0, 0.0, 0.0
    for entry in lib.entry_names(py_path):
        sig = lib.signature(getattr(module, entry))
        binding = next(iter(lib.bindings(sig, options)), {})
        inputs = lib.make_inputs(sig, binding, lib.seed_for(stem(py_path), entry, 0, 0), options)
        outs = {}
        for device in ("cpu", DEVICE):
            start = time.monotonic()
            proc, out_dir = lib.run_graph(graph, entry, inputs, os.path.join(work, entry, device),
                                          ["--device", device])
            elapsed = time.monotonic() - start
            if device == "cpu":
                t_cpu += elapsed
            else:
                t_gpu += elapsed
            if proc.returncode != 0:
                outs[device] = lib.describe_result(proc)
                continue
            outs[device] = {f[:-4]: np.load(os.path.join(out_dir, f), allow_pickle=False)
                            for f in sorted(os.listdir(out_dir)) if f.endswith(".npy")}
        cases += 1
        cpu, gpu = outs["cpu"], outs[DEVICE]
        if isinstance(cpu, str):
            failures.append(f"{entry}: the CPU run failed: {cpu}")
            continue
        if isinstance(gpu, str):
            failures.append(f"{entry}: the {DEVICE} run failed: {gpu}")
            continue
        if sorted(cpu) != sorted(gpu):
            failures.append(f"{entry}: outputs {sorted(gpu)} on the GPU, {sorted(cpu)} on the CPU")
            continue
        for name in cpu:
            problem, rel = compare(f"{entry}.{name}", cpu[name], gpu[name])
            if problem:
                failures.append(problem)
            if rel is not None:
                worst = max(worst, rel)
    return cases, failures, worst, t_cpu, t_gpu


def main():
    programs = lib.list_programs()
    with tempfile.TemporaryDirectory(prefix="sg_gpu_") as work_root:
        why = gpu_available(work_root)
        if why is not None:
            print(f"{DEVICE} programs: skipped: {why}")
            return SKIP
        rows, failed = [], 0
        for py_path in programs:
            name = stem(py_path)
            work = os.path.join(work_root, name)
            os.makedirs(work)
            try:
                cases, failures, worst, t_cpu, t_gpu = run_program(py_path, work)
            except Exception as e:  # a compile or eager failure is this program's, not the run's
                cases, failures, worst, t_cpu, t_gpu = 0, [f"{type(e).__name__}: {e}"], 0.0, 0.0, 0.0
            failed += bool(failures)
            rows.append((name, cases, "ok" if not failures else "FAILED", worst, t_cpu, t_gpu, failures))
    print(f"| program | entries | {DEVICE} vs CPU | max rel. error | cpu s | {DEVICE} s |")
    print("|---|---|---|---|---|---|")
    for name, cases, result, worst, t_cpu, t_gpu, _ in rows:
        print(f"| {name} | {cases} | {result} | {worst:.2g} | {t_cpu:.2f} | {t_gpu:.2f} |")
    for name, _, _, _, _, _, failures in rows:
        for f in failures[:5]:
            print(f"  FAILED {name}: {f}")
    print(f"\n{DEVICE} programs: {len(rows) - failed}/{len(rows)} match the CPU")
    return 0 if rows and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
