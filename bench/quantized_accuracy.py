"""Accuracy under `graph-compile --quantize` (SPEC §13), beside bench/quantized.py's
speed table: (1) the bench's mlp and cnn on 1,000 random inputs (drawn as
bench/models/data.py draws their cases), top-1 agreement with f32 per storage; (2) every
example: the weights the file holds quantized and the max relative error of every
output against the example compiled in f32, on the same random inputs
(examples/make_inputs.py). Prints two Markdown tables.

    /usr/bin/python3 bench/models/data.py bench/out/data     # once (the bench weights)
    /usr/bin/python3 bench/quantized_accuracy.py [--build build] [--rows 64]

An example whose weights are entry inputs or program variables has no stored dense or
convolution weight for --quantize to take: its row says so (the f32 file is unchanged).
examples/layers.py reads its weights with sg.weight: they are made by its own
make_weights() and written to a safetensors file first. Classifiers (a softmax row
per input) also give top-1 agreement with f32 over --rows rows.
"""
import argparse
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "compiler", "python"))
STORAGES = ("int8", "int4", "bf16", "f16")


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def weights_file(example, work):
    """A weights file for an example that reads sg.weight and makes its own (layers.py)."""
    spec = importlib.util.spec_from_file_location(os.path.basename(example)[:-3], example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "make_weights"):
        return None
    import stagegraph as sg
    path = os.path.join(work, os.path.basename(example)[:-3] + ".safetensors")
    sg.write_safetensors(path, module.make_weights())
    return path


def outputs(graph_run, graph, inputs, out):
    os.makedirs(out)
    cmd = [graph_run, graph, "--threads", "1", "--output-dir", out]
    for f in sorted(os.listdir(inputs)):
        cmd += ["--input", f"{f[:-4]}={os.path.join(inputs, f)}"]
    run(cmd)
    return {f[:-4]: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))}


def bench_top1(compile_, graph_run, data, work, inputs=1000):
    """Top-1 agreement with f32 of mlp (one batch of `inputs` rows) and cnn (batch 1,
    `inputs` runs) per storage, on inputs drawn as their bench cases are."""
    rng = np.random.default_rng(1000)
    print(f"| workload | storage | top-1 agreement with f32 over {inputs:,} random inputs | max rel err "
          "| f32's top-2 gap where top-1 differs (largest) | f32's median top-2 gap |")
    print("|---|---|---|---:|---:|---:|")
    for workload in ("mlp", "cnn"):
        weights = os.path.join(data, workload, "weights.safetensors")
        if workload == "mlp":
            xs = [rng.random((inputs, 784), dtype=np.float32)]
        else:
            xs = [rng.random((1, 32, 32, 3), dtype=np.float32) for _ in range(inputs)]
        case = os.path.join(work, f"{workload}-top1")
        os.makedirs(case)
        for i, x in enumerate(xs):
            np.save(os.path.join(case, f"x{i}.npy"), x)
        logits = {}
        for storage in ("f32",) + STORAGES:
            graph = os.path.join(work, f"{workload}_top1_{storage}.sgraph")
            extra = [] if storage == "f32" else ["--quantize", storage]
            run([compile_, os.path.join(ROOT, "bench", "models", f"{workload}.py"), "-o", graph, "--weights",
                 weights, *extra])
            rows = []
            for i in range(len(xs)):
                out = os.path.join(work, f"{workload}-top1-{storage}-{i}")
                run([graph_run, graph, "--threads", "1", "--input", f"x={os.path.join(case, f'x{i}.npy')}",
                     "--output-dir", out])
                rows.append(np.load(os.path.join(out, os.listdir(out)[0])))
            logits[storage] = np.concatenate(rows)
            if storage != "f32":
                want = logits["f32"]
                same = want.argmax(1) == logits[storage].argmax(1)
                err = float(np.max(np.abs(logits[storage] - want))) / float(np.max(np.abs(want)))
                top2 = np.sort(want, axis=1)[:, -2:]
                gap = (top2[:, 1] - top2[:, 0]) / np.max(np.abs(want), axis=1)  # relative to the row's largest
                flipped = f"{float(np.max(gap[~same])):.1e}" if (~same).any() else "—"
                print(f"| {workload} | {storage} | {100 * float(np.mean(same)):.1f}% | {err:.2e} | {flipped} | "
                      f"{float(np.median(gap)):.1e} |", flush=True)
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--rows", type=int, default=64, help="the symbolic batch dim N of the examples")
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "out", "data"))
    a = p.parse_args()
    compile_, graph_run = os.path.join(a.build, "tools", "graph-compile"), os.path.join(a.build, "tools", "graph-run")
    with tempfile.TemporaryDirectory() as work:
        bench_top1(compile_, graph_run, a.data, work)
    print("| example | storage | weights quantized | bytes (f32 bytes) | max rel err | top-1 agreement |")
    print("|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as work:
        for example in sorted(glob.glob(os.path.join(ROOT, "examples", "*.py"))):
            name = os.path.basename(example)[:-3]
            if name == "make_inputs":
                continue
            weights = weights_file(example, work)
            extra = ["--weights", weights] if weights else []
            want = None
            for storage in STORAGES:
                graph = os.path.join(work, f"{name}_{storage}.sgraph")
                report = run([compile_, example, "-o", graph, *extra, "--quantize", storage, "--quantize-report"])
                total = re.search(r"^total\s+(\d+)\s+(\d+)", report, re.M)
                count = len([ln for ln in report.splitlines()[1:] if ln.strip() and not ln.startswith("total")])
                if count == 0:
                    print(f"| {name} | all | 0 | — | — | nothing to quantize: its weights are entry inputs or "
                          "program variables, not stored dense or convolution weights |")
                    break
                if want is None:
                    inputs = os.path.join(work, name + "-in")
                    run([sys.executable, os.path.join(ROOT, "examples", "make_inputs.py"), example, inputs,
                         "--dim", f"N={a.rows}"])
                    f32 = os.path.join(work, name + "_f32.sgraph")
                    run([compile_, example, "-o", f32, *extra])
                    want = outputs(graph_run, f32, inputs, os.path.join(work, name + "-out-f32"))
                got = outputs(graph_run, graph, inputs, os.path.join(work, f"{name}-out-{storage}"))
                err = max(float(np.max(np.abs(got[k].astype(np.float64) - w))) / max(float(np.max(np.abs(w))), 1e-30)
                          for k, w in want.items())
                agree = ""
                for k, w in want.items():
                    if w.ndim == 2 and w.shape[0] == a.rows and np.allclose(w.sum(axis=1), 1, atol=1e-4):
                        agree = f"{100 * np.mean(w.argmax(1) == got[k].argmax(1)):.0f}% of {a.rows} rows"
                print(f"| {name} | {storage} | {count} | {int(total.group(2)):,} ({int(total.group(1)):,}) | "
                      f"{err:.2e} | {agree} |", flush=True)


if __name__ == "__main__":
    main()
