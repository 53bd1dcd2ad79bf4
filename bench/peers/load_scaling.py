"""Load time against weight size: does graph-run's start-up stay flat as the weights
grow (SPEC §10: constants are used in place from a memory map)?

One staged program reads 4 floats of a single `sg.weight("w")` at a run-time offset
(a staged slice start, so the compiler cannot fold the slice and drop the rest of the
weight); the weight is 1 MiB, 16 MiB and 256 MiB of f32. For each size: a
safetensors file (bench/models/data.py's writer), the graph file from
`graph-compile --weights`, one checked run, then RUNS runs of the whole graph-run
process timed from start to exit (its first and only result), as the main tables
time ours, and the median. Also: the same with --verify-data (which reads the whole
data segment for its checksum: what reading the weights would cost), and graph-run's
peak RSS. Everything goes under bench/out/load_scaling/.

    bench/.venv/bin/python bench/peers/load_scaling.py [BUILD_DIR]   # prints the table
"""
import json
import os
import statistics
import subprocess
import sys

import numpy as np

import ours
from common import MODELS, OUT, REPO

DIR = os.path.join(OUT, "load_scaling")
SIZES_MIB = (1, 16, 256)
PROGRAM = '''"""bench/peers/load_scaling.py's program: 4 floats of one large weight."""
import stagegraph as sg


@sg.function
def first(x: sg.f32[4], i: sg.i64) -> sg.f32[4]:
    return sg.weight("w")[i:i + 4] + x
'''

RSS_RUNS = 3


def log(msg):
    print(msg, flush=True)


def write_inputs():
    folder = os.path.join(DIR, "inputs")
    os.makedirs(folder, exist_ok=True)
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    np.save(os.path.join(folder, "x.npy"), x)
    np.save(os.path.join(folder, "i.npy"), np.array(0, np.int64))
    return folder, x


def make_files(build_dir, mib):
    """Weights (remade only when missing) and the graph (always recompiled: the
    compiler may have changed). Returns (graph path, weights file, w[0:4])."""
    sys.path.insert(0, MODELS)
    import data  # bench/models/data.py: its safetensors writer
    weights = os.path.join(DIR, f"w{mib}mib.safetensors")
    n = mib * (1 << 20) // 4
    rng = np.random.default_rng([0, mib])
    head = rng.random(4, dtype=np.float32)  # w[0:4], the only floats the program reads
    if not os.path.exists(weights):
        w = np.empty(n, np.float32)
        w[:4] = head
        w[4:] = rng.random(n - 4, dtype=np.float32)
        data.write_safetensors(weights, {"w": w})
        del w
    program = os.path.join(DIR, "first.py")
    with open(program, "w") as f:
        f.write(PROGRAM)
    graph = os.path.join(DIR, f"w{mib}mib.sgraph")
    ours._call([ours.tool(build_dir, "graph-compile"), os.path.relpath(program, REPO), "-o", graph,
                "--weights", weights])
    for path in (weights, graph):  # written back now, not while graph-run is timed
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return graph, weights, head


def prepare(build_dir, mib, inputs, x):
    """The graph for one size, checked once; its commands and sizes."""
    graph, weights, head = make_files(build_dir, mib)
    got = ours.run_once(build_dir, graph, inputs)["output_0"]
    if not np.array_equal(got, head + x):
        raise ours.ToolError(f"wrong result {got.tolist()}, expected {(head + x).tolist()}")
    cmd = ours.run_cmd(build_dir, graph, inputs, 1)
    rss = [ours.peak_rss_kib(cmd) for _ in range(RSS_RUNS)]
    return {"weight_mib": mib, "weights_bytes": os.path.getsize(weights), "graph_bytes": os.path.getsize(graph),
            "peak_rss_kib": statistics.median(r[0] for r in rss), "launcher_rss_kib": max(r[1] for r in rss),
            "_cmd": cmd}


def run(build_dir, runs=10):
    """[{weight_mib, graph_bytes, load_ms, verify_ms, peak_rss_kib, ...} or
    {weight_mib, error}] for each size. The sizes take turns run by run (as the
    systems do in timing.py), so that drift in the machine's speed hits them alike."""
    os.makedirs(DIR, exist_ok=True)
    inputs, x = write_inputs()
    results = []
    for mib in SIZES_MIB:
        try:
            results.append(prepare(build_dir, mib, inputs, x))
        except (ours.ToolError, subprocess.CalledProcessError, OSError, ValueError) as e:
            results.append({"weight_mib": mib, "error": str(e).strip().splitlines()[0] if str(e).strip() else "failed"})
            log(f"  {mib:4} MiB weight: {results[-1]['error']}")
    ok = [r for r in results if "error" not in r]
    times = {(r["weight_mib"], v): [] for r in ok for v in (False, True)}
    try:
        for r in ok:  # untimed: the page cache holds each file (graph-compile just wrote it)
            ours.timed_ms(r["_cmd"])
        for verify in (False, True):  # the plain runs first: --verify-data's reads would evict caches
            for _ in range(runs):
                for r in ok:
                    times[r["weight_mib"], verify].append(ours.timed_ms(r["_cmd"] + ["--verify-data"] * verify))
    except subprocess.CalledProcessError as e:
        for r in ok:
            r["error"] = f"graph-run failed while timed: exit {e.returncode}"
    for r in ok:
        cmd = r.pop("_cmd")
        if "error" in r:
            continue
        r["runs"] = runs
        r["load_ms"] = statistics.median(times[r["weight_mib"], False])
        r["verify_ms"] = statistics.median(times[r["weight_mib"], True])
        log(f"  {r['weight_mib']:4} MiB weight: load {r['load_ms']:.2f} ms, with --verify-data "
            f"{r['verify_ms']:.2f} ms, peak RSS {r['peak_rss_kib'] / 1024:.1f} MiB ({' '.join(cmd[1:2])})")
    with open(os.path.join(DIR, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    return results


def mib_text(n):
    return f"{n / (1 << 20):.1f} MiB"


# A load time within this factor from the smallest weight to the largest is "flat":
# beyond it the sentence says that it grows.
FLAT_RATIO = 1.5


def report_lines(results):
    """The RESULTS.md section."""
    ok = [r for r in results if "error" not in r]
    runs = ok[0]["runs"] if ok else "?"
    lines = ["## Load time against weight size", "",
             "A program that reads 4 floats of its one f32 `sg.weight` (`w[i:i + 4] + x`, `i` a run-time "
             f"input), compiled with weights of each size; graph-run from exec to exit, median of {runs} runs, "
             "page cache warm; peak RSS of graph-run alone (bench/peers/load_scaling.py).", "",
             "| weight size | file size | load (median) | load with --verify-data | peak RSS |",
             "|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['weight_mib']} MiB | — | not measured: {r['error']} | — | — |")
            continue
        lines.append(f"| {r['weight_mib']} MiB | {mib_text(r['graph_bytes'])} | {r['load_ms']:.2f} ms | "
                     f"{r['verify_ms']:.2f} ms | {r['peak_rss_kib'] / 1024:.1f} MiB |")
    lines.append("")
    if len(ok) >= 2:
        small, big = ok[0], ok[-1]
        load_ratio = big["load_ms"] / small["load_ms"]
        verdict = ("stays flat: the weights are mapped, not read, and only the pages a run touches become "
                   "resident" if load_ratio <= FLAT_RATIO else "grows with the weights")
        lines.append(f"From {small['weight_mib']} to {big['weight_mib']} MiB of weights "
                     f"({big['weight_mib'] // small['weight_mib']}x) the load time goes from {small['load_ms']:.2f} "
                     f"to {big['load_ms']:.2f} ms ({load_ratio:.2f}x) and the peak RSS from "
                     f"{small['peak_rss_kib'] / 1024:.1f} to {big['peak_rss_kib'] / 1024:.1f} MiB: start-up "
                     f"{verdict}; reading every weight once (--verify-data's checksum) takes "
                     f"{big['verify_ms']:.0f} ms at {big['weight_mib']} MiB. (graph-run is forked by a "
                     f"{max(r['launcher_rss_kib'] for r in ok) / 1024:.1f} MiB launcher, whose pages fork "
                     "copies bound the RSS figure's floor.)")
        lines.append("")
    return lines


def main():
    build_dir = os.path.abspath(os.path.join(REPO, sys.argv[1] if len(sys.argv) > 1 else "build"))
    print("\n".join(report_lines(run(build_dir))))


if __name__ == "__main__":
    main()
