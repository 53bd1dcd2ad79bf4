"""Quantized rows beside a peer: ONNX Runtime's `quantize_dynamic` (int8 weights,
activations quantized per run, as ours) against our `--quantize int8`, each beside
its own f32 model, one thread, timed in alternation (BENCHMARKS.md's method).

    bench/.venv/bin/python bench/quantized_peers.py [--build build] [--runs 200]

Needs bench/.venv with numpy, onnx, onnxruntime, safetensors (bench/compare makes it)
and bench/out/data (bench/models/data.py). Prints a Markdown table; `ratio` is
ORT int8 median / ours int8 median (> 1: ours is faster).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import onnx_peer  # noqa: E402

CASES = [("mlp", "b1"), ("mlp", "b64"), ("rnn", "t100"), ("beam", "s50")]


def read_weights(path):
    from safetensors.numpy import load_file
    return dict(load_file(path))


def ort_median(run, inputs, runs):
    for _ in range(5):
        run(inputs)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run(inputs)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def ours_median(graph_run, graph, inputs, runs):
    args = [graph_run, graph, "--threads", "1", "--bench", str(runs)]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "out", "data"))
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3, help="alternations; the median of the rounds' medians")
    a = p.parse_args()
    from onnxruntime.quantization import QuantType, quantize_dynamic
    compile_, graph_run = os.path.join(a.build, "tools", "graph-compile"), os.path.join(a.build, "tools", "graph-run")
    print("| workload | case | ORT f32 ms | ORT int8 ms | ORT speed-up | ours f32 ms | ours int8 ms | ours speed-up "
          "| ORT int8 / ours int8 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for workload, case in CASES:
            data = os.path.join(a.data, workload)
            weights = read_weights(os.path.join(data, "weights.safetensors"))
            files = {f[:-4]: os.path.join(data, case, f) for f in sorted(os.listdir(os.path.join(data, case)))}
            arrays = {k: np.load(v) for k, v in files.items()}
            f32_onnx = onnx_peer.build(workload, weights, work)
            int8_onnx = os.path.join(work, f"{workload}_int8.onnx")
            quantize_dynamic(f32_onnx, int8_onnx, weight_type=QuantType.QInt8, per_channel=True)
            ort = {k: onnx_peer.load(workload, path, 1) for k, path in (("f32", f32_onnx), ("int8", int8_onnx))}
            graphs = {}
            for storage in ("f32", "int8"):
                graphs[storage] = os.path.join(work, f"{workload}_{storage}.sgraph")
                extra = [] if storage == "f32" else ["--quantize", storage]
                subprocess.run([compile_, os.path.join(ROOT, "bench", "models", f"{workload}.py"), "-o",
                                graphs[storage], "--weights", os.path.join(data, "weights.safetensors"), *extra],
                               check=True, capture_output=True)
            rounds = {k: [] for k in ("ort f32", "ort int8", "ours f32", "ours int8")}
            for _ in range(a.rounds):
                for storage in ("f32", "int8"):
                    rounds[f"ort {storage}"].append(ort_median(ort[storage], arrays, a.runs))
                    rounds[f"ours {storage}"].append(ours_median(graph_run, graphs[storage], files, a.runs))
            m = {k: float(np.median(v)) for k, v in rounds.items()}
            print(f"| {workload} | {case} | {m['ort f32']:.3f} | {m['ort int8']:.3f} | "
                  f"{m['ort f32'] / m['ort int8']:.2f} | {m['ours f32']:.3f} | {m['ours int8']:.3f} | "
                  f"{m['ours f32'] / m['ours int8']:.2f} | {m['ort int8'] / m['ours int8']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
