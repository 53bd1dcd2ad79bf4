"""The timing worker: one process per thread count, which times every system on every
case in alternation (ours, then each peer, then ours again, ...).

    bench/.venv/bin/python bench/peers/timing.py PLAN.json THREADS RUNS PER_ROUND OUT.json

A round gives each system PER_ROUND runs: ours as one `graph-run --bench PER_ROUND`
(its median; graph-run warms up first), each peer as one untimed run and then
PER_ROUND runs timed in process (their median). Rounds repeat until RUNS runs are done; the figure
is the median of the round medians. Between systems the worker pauses (SETTLE_S), so
that one system's pool threads, still spinning after its runs, do not take the cores
from the next one. The process is pinned to THREADS cores where the
machine has more, so that a system whose thread count cannot be set per session (XLA)
gets no more than the others.

A gradient workload and its forward alone (common.FORWARD_OF) on the same case are
timed together, their rounds interleaved (grad and forward of every system, then the
next round), so that their ratio, backward over forward, sees the same load."""
import json
import os
import statistics
import sys
import time

import numpy as np

import ours
import systems
from common import FORWARD_OF, case_dir, load_npy_dir

WARMUP_RUNS = 3
# Thread pools spin for a while after their last task before they sleep (ONNX
# Runtime's and pthreadpool's do): longer than that, and short beside a round.
SETTLE_S = 0.05


def pin_to(threads):
    cpus = sorted(os.sched_getaffinity(0))
    if threads < len(cpus):
        os.sched_setaffinity(0, cpus[:threads])


def peer_sampler(name, workload, path, inputs, threads):
    run = systems.module(name).load(workload, path, threads)
    for _ in range(WARMUP_RUNS):
        run(inputs)

    def sample(n):
        run(inputs)   # untimed, as graph-run warms up before each --bench
        times = []
        for _ in range(n):
            start = time.perf_counter()
            run(inputs)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3
    return sample


def ours_sampler(build_dir, path, folder, threads):
    return lambda n: ours.bench(build_dir, path, folder, threads, n)


def samplers(plan, item, threads, errors):
    """{system: sample(n) -> median ms} for the systems that passed the output check."""
    workload, case = item["workload"], item["case"]
    folder = case_dir(workload, case)
    inputs = load_npy_dir(folder)
    found = {}
    for name in systems.SYSTEMS:
        entry = plan["artifacts"][name][workload]
        if entry["status"] != "ok" or not item["agrees"].get(name):
            continue
        try:
            if name == systems.OURS:
                found[name] = ours_sampler(plan["build"], entry["path"], folder, threads)
            else:
                found[name] = peer_sampler(name, workload, entry["path"], inputs, threads)
        except Exception as e:  # noqa: BLE001 - a peer that fails to load is reported, not fatal
            errors[name] = f"load failed: {e}"
    return found


def key_of(item):
    return f"{item['workload']}/{item['case']}"


def time_cases(plan, items, threads, runs, per_round):
    """{case key: {system: median or error}} for cases timed together, in turns."""
    errors = {key_of(i): {} for i in items}
    medians = {key_of(i): {} for i in items}
    contenders = {}
    for item in items:
        for name, sample in samplers(plan, item, threads, errors[key_of(item)]).items():
            contenders[(key_of(item), name)] = sample
    rounds = max(1, -(-runs // per_round))
    for _ in range(rounds):
        for (key, name), sample in list(contenders.items()):
            time.sleep(SETTLE_S)
            try:
                medians[key].setdefault(name, []).append(sample(per_round))
            except Exception as e:  # noqa: BLE001 - e.g. ours failing at run time: reported
                errors[key][name] = f"failed while timing: {e}"
                del contenders[(key, name)]
                medians[key].pop(name, None)
    results = {}
    for key in medians:
        result = {n: {"median_ms": statistics.median(v), "runs": len(v) * per_round} for n, v in medians[key].items()}
        result.update({n: {"error": msg} for n, msg in errors[key].items()})
        results[key] = result
    return results


def groups(cases):
    """The plan's cases in order, each gradient workload's case with its forward's."""
    forward_of = {(FORWARD_OF[i["workload"]], i["case"]) for i in cases if i["workload"] in FORWARD_OF}
    by_key = {(i["workload"], i["case"]): i for i in cases}
    found, taken = [], set()
    for item in cases:
        k = (item["workload"], item["case"])
        if k in taken:
            continue
        group = [item]
        if item["workload"] in FORWARD_OF and (FORWARD_OF[item["workload"]], item["case"]) in by_key:
            group.append(by_key[(FORWARD_OF[item["workload"]], item["case"])])
        elif k in forward_of:   # a forward listed before its gradient: wait for it
            continue
        taken.update((i["workload"], i["case"]) for i in group)
        found.append(group)
    found += [[i] for i in cases if (i["workload"], i["case"]) not in taken]
    return found


def peak_gflops(repeats=10, n=1024):
    """Measured float32 GEMM throughput (NumPy's BLAS), the bar for dense work."""
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9


def main():
    plan_path, threads, runs, per_round, out_path = sys.argv[1:6]
    threads, runs, per_round = int(threads), int(runs), int(per_round)
    pin_to(threads)
    with open(plan_path) as f:
        plan = json.load(f)
    if any(entry.get("status") == "ok" for entry in plan["artifacts"].get("pytorch", {}).values()):
        # torch.optim's first optimizer aborts the process ("LLVM ERROR: ... registered
        # more than once") when made after JAX or TensorFlow has loaded its LLVM; made
        # first, all three live in one process.
        import torch
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    results = {}
    for group in groups(plan["cases"]):
        keys = " with ".join(key_of(i) for i in group)
        print(f"  timing {keys} ({threads} thread{'s' if threads > 1 else ''})", flush=True)
        results.update(time_cases(plan, group, threads, runs, per_round))
    results["_peak_gflops"] = peak_gflops()
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
