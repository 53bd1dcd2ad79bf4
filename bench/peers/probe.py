"""Load time and peak memory of one inference process.

    bench/.venv/bin/python bench/peers/probe.py PLAN.json SYSTEM WORKLOAD CASE

prints one JSON line: load_ms (model file to first result), import_ms (a peer's
Python package, before that) and peak_rss_mb. The process measured is always a child
of this one, read with RUSAGE_CHILDREN: Linux keeps a process's peak RSS across exec,
so a process started by the large benchmark driver would report the driver's peak.
For ours the child is graph-run itself (process_ms: its whole run, from exec to the
first result; its peak RSS read by a small launcher that forks it, see
ours.peak_rss_kib), and load_ms is in process through the C++ API, as the peers'
(bench/load/load_probe.cc, a fresh process each time);
for a peer it is this script again with --child, framework included."""
import importlib
import json
import os
import resource
import subprocess
import sys
import time

import ours
import systems
from common import case_dir, load_npy_dir


def child_peak_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def in_process_load(build_dir, path, folder):
    """Ours in process, through the C++ API (bench/load/load_probe.cc): graph file to
    first result in a fresh process, its inputs read before the clock starts, as a
    peer's in-process load. None where the probe is not built or fails."""
    exe = os.path.join(build_dir, "bench", "sg_load_probe")
    if not os.path.exists(exe):
        return None
    cmd = [exe, path, "--threads", "1"]
    for f in sorted(os.listdir(folder)):
        if f.endswith(".npy"):
            cmd += ["--input", f"{f[:-4]}={os.path.join(folder, f)}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def probe_ours(plan, path, folder):
    cmd = ours.run_cmd(plan["build"], path, folder, 1)
    load_ms = ours.timed_ms(cmd)
    # Not RUSAGE_CHILDREN: subprocess starts graph-run with vfork, whose exec keeps
    # this Python process's peak (numpy included, ~26 MB) as graph-run's.
    result = {"process_ms": load_ms, "peak_rss_mb": ours.peak_rss_kib(cmd)[0] / 1024}
    inner = in_process_load(plan["build"], path, folder)
    if inner is not None:
        result["load_ms"] = inner["load_ms"]
        result["load_parts"] = inner
    else:
        result["load_ms"] = load_ms
    return result


def probe_peer(plan_path, name, workload, case):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", plan_path, name, workload, case],
                       check=True, capture_output=True, text=True)
    result = json.loads(p.stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = child_peak_mb()
    return result


def load_and_run_once(name, workload, path, folder):
    """The child: import the peer, load the model file, run it once."""
    inputs = load_npy_dir(folder)
    start = time.perf_counter()
    importlib.import_module(systems.package_of(name))
    module = systems.module(name)
    import_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    module.load(workload, path, 1)(inputs)
    return {"load_ms": (time.perf_counter() - start) * 1e3, "import_ms": import_ms}


def main():
    child = sys.argv[1] == "--child"
    plan_path, name, workload, case = sys.argv[2:6] if child else sys.argv[1:5]
    with open(plan_path) as f:
        plan = json.load(f)
    path = plan["artifacts"][name][workload]["path"]
    folder = case_dir(workload, case)
    if child:
        result = load_and_run_once(name, workload, path, folder)
    elif name == systems.OURS:
        result = probe_ours(plan, path, folder)
    else:
        result = probe_peer(plan_path, name, workload, case)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
