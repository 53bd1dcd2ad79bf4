"""The steps of bench/compare, run inside bench/.venv: data, eager reference, model
files, output check, timing, load/memory probes, RESULTS.md."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

import load_scaling
import ours
import report
import systems
from common import (DATA, MODELS, OUT, REPO, REVERSE_MODE, WORKLOADS, CannotExpress, case_dir, cases,
                    load_npy_dir, load_weights, max_relative_error, agrees)

EAGER = os.path.join(OUT, "eager")
SYSTEM_PYTHON = "/usr/bin/python3"


def log(msg):
    print(msg, flush=True)


# ---- data and the eager reference ------------------------------------------------------------

def sources_digest():
    h = hashlib.sha256()
    for f in sorted(os.listdir(MODELS)):
        if f.endswith(".py"):
            with open(os.path.join(MODELS, f), "rb") as fh:
                h.update(f.encode() + fh.read())
    return h.hexdigest()


def eager_python():
    """The eager reference runs as SPEC §1 says: the system interpreter with NumPy."""
    ok = subprocess.run([SYSTEM_PYTHON, "-c", "import numpy"], capture_output=True).returncode == 0
    return SYSTEM_PYTHON if ok else sys.executable


def prepare_data(workloads):
    """Weights, inputs and eager outputs, remade only when bench/models changed. The
    gradient workloads and their forwards are checked against bench/models/reference.py
    (float64 backpropagation by hand) instead of eager mode."""
    stamp = os.path.join(OUT, "data.stamp")
    digest = sources_digest()
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    sys.path.insert(0, MODELS)
    import data
    log("making weights and inputs (seed 0) and the eager-mode reference")
    data.generate(DATA)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "compiler", "python"))
    python = eager_python()
    for workload in WORKLOADS:
        for case in cases(workload):
            if workload in REVERSE_MODE:
                cmd = [python, os.path.join(MODELS, "reference.py"), workload]
            else:
                cmd = [python, os.path.join(MODELS, "run_eager.py"), os.path.join(MODELS, f"{workload}.py"),
                       os.path.join(DATA, workload, "weights.safetensors")]
            subprocess.run(cmd + [case_dir(workload, case), os.path.join(EAGER, workload, case)], env=env, check=True)
    with open(stamp, "w") as f:
        f.write(digest)


# ---- model files -------------------------------------------------------------------------

def build_ours(build_dir, workloads):
    out_dir = os.path.join(OUT, systems.OURS)
    os.makedirs(out_dir, exist_ok=True)
    result = {}
    for w in workloads:
        try:
            result[w] = {"status": "ok", "path": ours.build(build_dir, w, out_dir)}
        except ours.ToolError as e:
            result[w] = {"status": "not yet", "message": f"graph-compile: {e}"}
        log(f"  {systems.OURS:12} {w:14} {result[w]['status']} {result[w].get('message', '')}")
    return result


def build_peer(name, workloads):
    if not systems.installed(name):
        return {w: {"status": "not installed", "message": f"{systems.package_of(name)} is not installed"}
                for w in workloads}
    module = systems.module(name)
    out_dir = os.path.join(OUT, name)
    os.makedirs(out_dir, exist_ok=True)
    result = {}
    for w in workloads:
        try:
            result[w] = {"status": "ok", "path": module.build(w, load_weights(w), out_dir)}
        except CannotExpress as e:
            result[w] = {"status": "cannot express", "message": str(e)}
        except Exception as e:  # noqa: BLE001 - a peer's failure is a result to report
            kind = "not measured" if type(e).__name__ == "NotMeasured" else "failed"
            result[w] = {"status": kind, "message": str(e).strip().splitlines()[0] if str(e).strip() else kind}
        log(f"  {name:12} {w:14} {result[w]['status']} {result[w].get('message', '')}")
    return result


# ---- output check -----------------------------------------------------------------------

_PEER_ONCE = """
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import systems
from common import load_npy_dir
got = systems.module(sys.argv[2]).load(sys.argv[3], sys.argv[4], 1)(load_npy_dir(sys.argv[5]))
np.savez(sys.argv[6], **{k: np.asarray(v) for k, v in got.items()})
"""


def outputs_of(name, workload, entry, build_dir, folder):
    if name == systems.OURS:
        return ours.run_once(build_dir, entry["path"], folder)
    # Each peer in a process of its own: JAX, PyTorch and TensorFlow each carry an LLVM,
    # and some pairs abort when loaded into one process ("Option ... registered more
    # than once"), as the training workloads' optimizers do.
    out = os.path.join(OUT, f"check_{name}_{workload}.npz")
    p = subprocess.run([sys.executable, "-c", _PEER_ONCE, os.path.dirname(os.path.abspath(__file__)), name, workload,
                        entry["path"], folder, out], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1])
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def check_case(artifacts, build_dir, workload, case):
    """Runs every built system once on the case and compares with eager mode."""
    folder = case_dir(workload, case)
    want = load_npy_dir(os.path.join(EAGER, workload, case))
    item = {"workload": workload, "case": case, "error": {}, "agrees": {}, "failure": {}, "vs_ours": {}}
    ours_outputs = None
    for name in systems.SYSTEMS:
        entry = artifacts[name][workload]
        if entry["status"] != "ok":
            continue
        try:
            got = outputs_of(name, workload, entry, build_dir, folder)
            err = max_relative_error(got, want)
        except Exception as e:  # noqa: BLE001 - reported in the table
            item["failure"][name] = f"run: {e}".splitlines()[0]
            log(f"  {workload}/{case:6} {name:12} failed: {item['failure'][name]}")
            continue
        item["error"][name], item["agrees"][name] = err, agrees(err)
        shown = "missing or mis-shaped output" if err is None else f"{err:.2e}"
        against = "the float64 reference" if workload in REVERSE_MODE else "eager"
        log(f"  {workload}/{case:6} {name:12} max relative error vs {against} {shown}"
            f"{'' if agrees(err) else '  (DISAGREES)'}")
        if name == systems.OURS:
            ours_outputs = got
        elif ours_outputs is not None:
            # Peers against ours directly, beside both against the reference.
            item["vs_ours"][name] = max_relative_error(got, ours_outputs)
            shown = "missing or mis-shaped output" if item["vs_ours"][name] is None else f"{item['vs_ours'][name]:.2e}"
            log(f"  {workload}/{case:6} {name:12} max relative error vs stagegraph {shown}")
    return item


# ---- timing and probes --------------------------------------------------------------------

def run_timing(plan_path, threads, runs, per_round):
    out = os.path.join(OUT, f"timing_{threads}.json")
    # NumPy's BLAS, which measures the peak GFLOP/s of the lower bounds, starts its
    # threads when NumPy is imported, before the worker pins itself: limit them
    # here, or the 1-thread peak is the whole machine's.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "timing.py"), plan_path,
                    str(threads), str(runs), str(per_round), out], check=True, env=env)
    with open(out) as f:
        return json.load(f)


def stream_rates(build_dir):
    """{KiB: GB/s} one core reads a buffer of that size again and again
    (bench/micro's BM_StreamRead on our SIMD scan), for the memory lower bounds; {}
    where the micro-benchmarks are not built."""
    exe = os.path.join(build_dir, "bench", "sg_xnnpack_bench")
    if not os.path.exists(exe):
        return {}
    p = subprocess.run([exe, "--benchmark_filter=BM_StreamRead", "--benchmark_format=json",
                        "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {}
    rates = {}
    for b in json.loads(p.stdout)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rates[int(b["run_name"].split("/")[1])] = b["GB/s"]  # the counter is GB/s already
    return rates


def run_probe(plan_path, name, workload, case):
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "probe.py"), plan_path,
                        name, workload, case], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["probe failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_probes(plan_path, plan):
    probes = {}
    for item in plan["cases"]:
        for name, ok in item["agrees"].items():
            if ok:
                probes.setdefault(f"{item['workload']}/{item['case']}", {})[name] = \
                    run_probe(plan_path, name, item["workload"], item["case"])
    return probes


def main(args):
    args.loadavg_start = os.getloadavg()
    workloads = args.workloads
    build_dir = os.path.abspath(os.path.join(REPO, args.build))
    os.makedirs(OUT, exist_ok=True)
    prepare_data(workloads)
    log("building the model files")
    artifacts = {systems.OURS: build_ours(build_dir, workloads)}
    for name, _, _ in systems.PEERS:
        if name == "pytorch" and not args.with_torch and not systems.installed(name):
            artifacts[name] = {w: {"status": "not installed", "message": "torch is not installed "
                                   "(bench/compare --with-torch installs it)"} for w in workloads}
            continue
        artifacts[name] = build_peer(name, workloads)
    log("checking every system's outputs against eager mode (the gradient workloads: the float64 reference)")
    plan = {"build": build_dir, "artifacts": artifacts,
            "cases": [check_case(artifacts, build_dir, w, c) for w in workloads for c in cases(w)]}
    plan_path = os.path.join(OUT, "plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f, indent=1)
    timings = {}
    for t in args.threads:
        log(f"timing with {t} thread{'s' if t > 1 else ''}: {args.runs} runs each, {args.per_round} per round")
        timings[t] = run_timing(plan_path, t, args.runs, args.per_round)
    log("measuring load time and peak memory")
    probes = run_probes(plan_path, plan)
    profiles = {}
    for item in plan["cases"]:   # what rnn_grad's loop keeps (its tapes, graph-run's memory), a training step's memory
        if item["workload"] in ("rnn_grad", "rnn_loss", "mlp_train", "rnn_train") and item["agrees"].get(systems.OURS):
            key, path = f"{item['workload']}/{item['case']}", artifacts[systems.OURS][item["workload"]]["path"]
            folder = case_dir(item["workload"], item["case"])
            try:
                profiles[key] = {"memory": ours.profile_memory(build_dir, path, folder),
                                 "tapes": ours.tapes(build_dir, path)}
            except ours.ToolError as e:
                profiles[key] = {"memory": f"failed: {e}"}
    scaling = None
    if set(WORKLOADS) <= set(workloads):   # a partial run keeps RESULTS.md's other sections, this one too
        log("measuring load time against weight size (bench/peers/load_scaling.py)")
        scaling = load_scaling.run(build_dir, runs=10 if args.quick else 20)
    log("measuring one core's streaming rate (bench/micro BM_StreamRead)")
    path = report.write(plan, timings, probes, args, stream_rates(build_dir), scaling, profiles)
    log(f"wrote {os.path.relpath(path, REPO)}")
