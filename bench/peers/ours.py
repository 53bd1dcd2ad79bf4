"""Stagegraph, driven through its tools: graph-compile for the file, graph-run for
results and timing (`--bench N` prints min/median/max after its warm-up runs). The
compiler and runtime may not handle every workload yet; each step returns either its
result or the tool's own error message."""
import os
import re
import subprocess
import sys
import tempfile
import time

from common import MODELS, REPO, load_npy_dir, weights_path

NAME = "stagegraph"
BENCH_LINE = re.compile(r"bench: (\d+) runs, min ([\d.]+) ms, median ([\d.]+) ms, max ([\d.]+) ms")


class ToolError(Exception):
    """A tool failed; the message is its first error line."""


def tool(build_dir, name):
    return os.path.join(build_dir, "tools", name)


def first_error(returncode, stderr, stdout=""):
    """The tool's first error line (FILE:LINE:COL: error: ...), else its exit status."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return f"exit {returncode}: {lines[0] if lines else 'no message'}"


def _call(cmd, timeout=600):
    if not os.path.exists(cmd[0]):
        raise ToolError(f"{cmd[0]} is not built")
    try:
        # From the repository root, so that messages name bench/models/... files.
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{os.path.basename(cmd[0])} did not finish in {timeout} s") from None
    if p.returncode != 0:
        raise ToolError(first_error(p.returncode, p.stderr, p.stdout))
    return p.stdout


def compile_cmd(build_dir, workload, out_path):
    model = os.path.relpath(os.path.join(MODELS, f"{workload}.py"), REPO)
    cmd = [tool(build_dir, "graph-compile"), model, "-o", out_path,
           "--weights", weights_path(workload)]
    return cmd + (["-O0"] if workload == "dispatch" else [])


def build(build_dir, workload, out_dir):
    """Compiles bench/models/WORKLOAD.py; returns the graph file's path."""
    path = os.path.join(out_dir, f"{workload}.sgraph")
    _call(compile_cmd(build_dir, workload, path))
    return path


def run_cmd(build_dir, graph, case_dir, threads, extra=()):
    cmd = [tool(build_dir, "graph-run"), graph, "--threads", str(threads)]
    for f in sorted(os.listdir(case_dir)):
        if f.endswith(".npy"):
            cmd += ["--input", f"{f[:-4]}={os.path.join(case_dir, f)}"]
    return cmd + list(extra)


def run_once(build_dir, graph, case_dir, threads=1):
    """The graph's results on one case, {name: array}."""
    with tempfile.TemporaryDirectory() as out:
        _call(run_cmd(build_dir, graph, case_dir, threads, ["--output-dir", out]))
        return load_npy_dir(out)


def profile_memory(build_dir, graph, case_dir):
    """The memory lines of `graph-run --profile` (arena, its lower bound, frame stack,
    prepared kernels), one run, one thread."""
    out = _call(run_cmd(build_dir, graph, case_dir, 1, ["--profile"]))
    lines = out.splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.strip() == "profile: memory"), None)
    if at is None:
        raise ToolError("graph-run --profile printed no memory section")
    return "; ".join(ln.strip() for ln in lines[at + 1:] if ln.startswith("  "))


def tapes(build_dir, graph):
    """The types of the tapes a taped While appends to (the concatenate nodes of the
    graph functions named `*.taped#N`, from `graph-inspect --dot`), e.g. ["i64[T#1]",
    "f32[T#2, 256]"]; None where graph-inspect is not built."""
    if not os.path.exists(tool(build_dir, "graph-inspect")):
        return None
    found, taped = [], False
    for line in _call([tool(build_dir, "graph-inspect"), graph, "--dot"]).splitlines():
        m = re.match(r'\s*label="([^"]*)";', line)
        if m:
            taped = re.search(r"\.taped#\d+$", m.group(1)) is not None
        m = re.search(r'label="concatenate\\n([^\\"]*)', line)
        if taped and m:
            found.append(m.group(1))
    return found


def bench(build_dir, graph, case_dir, threads, runs):
    """graph-run's median latency in ms over `runs` runs (after its warm-up runs)."""
    out = _call(run_cmd(build_dir, graph, case_dir, threads, ["--bench", str(runs)]))
    m = BENCH_LINE.search(out)
    if not m:
        raise ToolError("graph-run --bench printed no 'bench:' line")
    return float(m.group(3))


def timed_ms(cmd):
    """Wall time of one whole graph-run process (exec to exit), in ms."""
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1e3


# Peak RSS of graph-run alone: a process's ru_maxrss keeps the peak of the process it
# was exec'ed from (and a vfork child's exec records its parent's), so graph-run is
# forked by this small launcher (python -S, only os), not by the driver, and its own
# rusage is read with wait4. What fork copies of the launcher (at most its RSS, a few
# MiB, printed beside) is the floor of the figure.
LAUNCHER = r"""
import os, sys
with open("/proc/self/status") as f:
    own = next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0)
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, own)
"""


def peak_rss_kib(cmd):
    """(graph-run's peak RSS, the launcher's RSS before the fork), in KiB."""
    p = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *cmd], capture_output=True, text=True, check=True)
    code, child, launcher = (int(v) for v in p.stdout.split())
    if code != 0:
        raise ToolError(f"graph-run exited {code} under the RSS launcher")
    return child, launcher
