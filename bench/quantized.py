"""File size, speed (graph-run --bench, one thread) and output error of the mlp,
rnn, beam and cnn workloads with their weights as f32 and under each
`graph-compile --quantize` storage (SPEC §13). Prints a Markdown table.

    /usr/bin/python3 bench/models/data.py bench/out/data     # once
    /usr/bin/python3 bench/quantized.py [--build build] [--runs 200]

Error: max |out - f32 out| / max |f32 out| over all outputs; beam also says
whether its token checksum (exact) matches f32's; mlp and cnn give top-1 agreement
with f32 over the case's rows.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [("mlp", "b1"), ("mlp", "b64"), ("rnn", "t100"), ("beam", "s50"), ("cnn", "1")]
# "int8/wo", "int4/wo": the same file run with graph-run --weight-only-quant (f32
# products over the widened weights instead of quantized activations).
STORAGES = ("f32", "int8", "int8/wo", "int4", "int4/wo", "bf16", "f16")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "out", "data"))
    p.add_argument("--runs", type=int, default=200)
    a = p.parse_args()
    compile_, graph_run = os.path.join(a.build, "tools", "graph-compile"), os.path.join(a.build, "tools", "graph-run")
    print("| workload | case | storage | file bytes | x f32 | median ms | speed-up | max rel err | agreement |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as work:
        for workload, case in CASES:
            data = os.path.join(a.data, workload)
            inputs = []
            for f in sorted(os.listdir(os.path.join(data, case))):
                inputs += ["--input", f"{f[:-4]}={os.path.join(data, case, f)}"]
            base = {}
            for storage in STORAGES:
                stored, _, mode = storage.partition("/")
                graph = os.path.join(work, f"{workload}_{stored}.sgraph")
                extra = [] if stored == "f32" else ["--quantize", stored]
                if not mode:
                    run([compile_, os.path.join(ROOT, "bench", "models", f"{workload}.py"), "-o", graph, "--weights",
                         os.path.join(data, "weights.safetensors"), *extra])
                out_dir = os.path.join(work, f"out_{workload}_{case}_{storage.replace('/', '_')}")
                os.makedirs(out_dir)
                flags = ["--weight-only-quant"] if mode else []
                text = run([graph_run, graph, *inputs, "--threads", "1", "--bench", str(a.runs), "--output-dir", out_dir,
                            *flags])
                median = float(re.search(r"median ([0-9.]+) ms", text).group(1))
                outs = {f: np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir))}
                size = os.path.getsize(graph)
                if storage == "f32":
                    base = {"size": size, "median": median, "outs": outs}
                err = max(float(np.max(np.abs(o.astype(np.float64) - base["outs"][f])) /
                                max(float(np.max(np.abs(base["outs"][f]))), 1e-30)) for f, o in outs.items())
                agree = ""
                if workload == "beam":
                    agree = "tokens equal" if outs["check.npy"] == base["outs"]["check.npy"] else "tokens differ"
                elif workload in ("mlp", "cnn"):
                    o, r = next(iter(outs.values())), next(iter(base["outs"].values()))
                    agree = f"top-1 {np.mean(o.reshape(-1, o.shape[-1]).argmax(1) == r.reshape(-1, r.shape[-1]).argmax(1)):.0%}"
                print(f"| {workload} | {case} | {storage} | {size:,} | {size / base['size']:.3f} | {median:.3f} | "
                      f"{base['median'] / median:.2f} | {err:.2e} | {agree} |", flush=True)


if __name__ == "__main__":
    main()
