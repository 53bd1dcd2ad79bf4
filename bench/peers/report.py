"""Writes bench/RESULTS.md from the plan (model files, output check), the timings per
thread count and the load/memory probes."""
import datetime
import glob
import importlib.metadata
import os
import platform
import subprocess
import tempfile

import load_scaling
import systems
from common import BENCH, FORWARD_OF, REPO, TRAINING, WORKLOADS

PEER_PACKAGES = ["onnxruntime", "onnx", "tensorflow-cpu", "jax", "jaxlib", "torch"]


def flops(workload, case):
    """Multiply-adds x 2 of the dense work, for the lower bound FLOPs / peak."""
    if workload in ("mlp", "mlp_dynamic", "mlp_loss"):
        return 2 * int(case[1:]) * (784 * 512 + 512 * 512 + 512 * 10)
    if workload in ("mlp_grad", "mlp_train"):   # forward, every weight's gradient, the hidden layers' (not x's)
        return 2 * int(case[1:]) * (2 * (784 * 512 + 512 * 512 + 512 * 10) + 512 * 512 + 512 * 10)
    if workload == "rnn_loss":
        return 100 * 2 * (64 * 256 + 256 * 256)
    if workload in ("rnn_grad", "rnn_train"):   # forward, then per step dW, dU and dh
        return 100 * 2 * (2 * 64 * 256 + 3 * 256 * 256)
    if workload == "tree_rnn_loss":
        return 2 * 64 * 64 * (128 + 3 * 127)
    if workload == "tree_rnn_grad":   # forward, then per leaf dW_leaf, per inner node 3 weights' and 2 children's
        return 2 * 64 * 64 * (2 * 128 + 8 * 127)
    if workload in ("cnn", "cnn_dynamic"):
        return 2 * (32 * 32 * 16 * 27 + 16 * 16 * 32 * 144 + 8 * 8 * 64 * 288 + 1024 * 10)
    if workload == "rnn":
        return 100 * 2 * (64 * 256 + 256 * 256)
    if workload == "tree_rnn":
        return 2 * 64 * 64 * (128 + 3 * 127)
    if workload == "beam":
        return 50 * 2 * (64 * 128 + 128 * 128 + 128 * 1000)
    return None


def weights_per_step(workload):
    """(bytes of f32 weights read again every step, steps, KiB the stream benchmark
    measures, FLOPs outside the steps' matrix-vector products) for the loops whose
    products re-read their weights from cache each step, for the memory lower bound;
    None for the others. rnn's input product xs @ w runs once, outside its loop."""
    if workload == "rnn":
        return 4 * 256 * 256, 100, 256, 2 * 100 * 64 * 256
    if workload == "beam":
        return 4 * (64 * 128 + 128 * 128 + 128 * 1000), 50, 596, 0
    return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def source_dir(build_dir):
    """The source tree the build was configured from (CMakeCache.txt's
    CMAKE_HOME_DIRECTORY): a worktree's, where --build names one, not the repository's."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return REPO


def git_commit(build_dir):
    """The commit Stagegraph was built from (the build's source tree), so that a build
    made in a worktree is not labelled with the repository's HEAD."""
    def git(*args):
        return subprocess.run(["git", "-C", source_dir(build_dir), *args], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def versions():
    found = []
    for p in PEER_PACKAGES:
        try:
            found.append(f"{p} {importlib.metadata.version(p)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def runtime_library_size(build_dir):
    """Stripped size of the runtime library (and its kernel libraries) in the build."""
    libs = [p for pat in ("runtime/libsg_runtime.*", "kernels/**/libsg_*.*")
            for p in glob.glob(os.path.join(build_dir, pat), recursive=True)]
    if not libs:
        return None
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for lib in libs:
            out = os.path.join(tmp, os.path.basename(lib))
            if subprocess.run(["strip", "--strip-unneeded", "-o", out, lib], capture_output=True).returncode == 0:
                total += os.path.getsize(out)
    return total, [os.path.relpath(p, build_dir) for p in libs]


def size_text(n):
    if n < 10 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def load_text(probe):
    if "load_ms" not in probe:
        return "—"
    text = f"{probe['load_ms']:.1f} ms"
    if "process_ms" in probe and "load_parts" in probe:
        text += f" ({probe['process_ms']:.1f} ms process)"
    return text + (f" (+{probe['import_ms'] / 1e3:.1f} s import)" if "import_ms" in probe else "")


def cell(plan, item, name, timing):
    """The latency cell of a system: a median, or why there is none."""
    entry = plan["artifacts"][name][item["workload"]]
    if entry["status"] != "ok":
        return entry["status"]
    if name in item["failure"]:
        return "not yet" if name == systems.OURS else "failed"
    if not item["agrees"].get(name):
        return "wrong result"
    t = timing.get(name, {})
    return f"{t['median_ms']:.3f} ms" if "median_ms" in t else "error"


def ratio(timing, name):
    ours_t, peer_t = timing.get(systems.OURS, {}), timing.get(name, {})
    if "median_ms" not in ours_t or "median_ms" not in peer_t:
        return "—"
    return f"{peer_t['median_ms'] / ours_t['median_ms']:.2f}"


def notes_for(plan, item, timings):
    """The messages behind the table's words, once per system."""
    notes = []
    for name in systems.SYSTEMS:
        entry = plan["artifacts"][name][item["workload"]]
        if entry["status"] not in ("ok", "not installed", "not measured") and entry.get("message"):
            notes.append(f"{name}: {entry['status']}: {entry['message']}")
        if name in item["failure"]:
            word = "not yet" if name == systems.OURS else "failed"
            notes.append(f"{name}: {word}: {item['failure'][name]}")
        for t, timing in timings.items():
            if "error" in timing.get(f"{item['workload']}/{item['case']}", {}).get(name, {}):
                notes.append(f"{name} ({t} threads): {timing[item['workload'] + '/' + item['case']][name]['error']}")
    return notes


def case_table(plan, item, timings, probes):
    key = f"{item['workload']}/{item['case']}"
    head = "| system |" + "".join(f" {t} thr. median | peer/ours |" for t in timings)
    head += " max rel. err | peak RSS | load | file |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name in systems.SYSTEMS:
        row = f"| {name} |"
        for t, timing in timings.items():
            row += f" {cell(plan, item, name, timing.get(key, {}))} | {ratio(timing.get(key, {}), name)} |"
        err = item["error"].get(name)
        probe = probes.get(key, {}).get(name, {})
        path = plan["artifacts"][name][item["workload"]].get("path")
        is_file = path and not path.endswith(".safetensors")
        row += f" {'—' if err is None else f'{err:.1e}'} |"
        row += f" {probe['peak_rss_mb']:.0f} MB |" if "peak_rss_mb" in probe else " — |"
        row += f" {load_text(probe)} |"
        row += f" {size_text(os.path.getsize(path))} |" if is_file and os.path.exists(path) else " — |"
        lines.append(row)
    return lines


def lower_bound(item, timings):
    f = flops(item["workload"], item["case"])
    if f is None:
        return []
    parts = [f"{t} thr.: {f / (timing['_peak_gflops'] * 1e9) * 1e3:.3f} ms at {timing['_peak_gflops']:.0f} GFLOP/s"
             for t, timing in timings.items() if "_peak_gflops" in timing]
    return [f"Lower bound: {f / 1e6:.2f} MFLOP / measured peak ({'; '.join(parts)})."] if parts else []


def memory_bound(item, timings, rates):
    """The time one core needs to read the loop's weights once per step, at the rate
    it streams a buffer of that size (BM_StreamRead): no f32 kernel goes under it.
    Work outside the steps (rnn's input product) adds its FLOPs at the measured peak.
    Each system's 1-thread median over it: for ours, how close we are; for a peer,
    the most any f32 runtime can be faster than it on one core."""
    w = weights_per_step(item["workload"])
    if w is None or w[2] not in rates:
        return []
    per_step, steps, kib, other_flops = w
    ms = steps * per_step / (rates[kib] * 1e9) * 1e3
    line = (f"Memory bound, 1 thr.: {steps} steps x {per_step / 1024:.0f} KiB of weights read again each step, "
            f"at {rates[kib]:.0f} GB/s (one core streaming {kib} KiB) = {ms:.3f} ms")
    peak = timings.get(1, {}).get("_peak_gflops")
    if other_flops and peak:
        compute = other_flops / (peak * 1e9) * 1e3
        line += (f", + {other_flops / 1e6:.2f} MFLOP outside the loop at {peak:.0f} GFLOP/s = "
                 f"{ms + compute:.3f} ms")
        ms += compute
    one = timings.get(1, {}).get(f"{item['workload']}/{item['case']}", {})
    over = [f"{name} {one[name]['median_ms'] / ms:.2f}x" for name in systems.SYSTEMS
            if "median_ms" in one.get(name, {})]
    if over:
        line += "; 1-thread medians over it: " + ", ".join(over)
    return [line + ". With 2 threads each core reads its half of the weights."]


def header(plan, timings, args):
    lib = runtime_library_size(plan["build"])
    lines = ["# Benchmark results", "",
             "Written by `bench/compare` (see bench/README.md for the method); do not edit by hand.", "",
             f"- date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}",
             f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs)",
             f"- threads: {', '.join(str(t) for t in timings)}; {args.runs} timed runs per system and "
             f"thread count, {args.per_round} per round, systems in alternation"
             + (" (--quick)" if args.quick else ""),
             f"- commit: {git_commit(plan['build'])}",
             f"- {load_text_of(args)}",
             f"- peers: {versions() or 'none installed'}",
             "- stagegraph runtime, stripped: " + (f"{size_text(lib[0])} ({', '.join(lib[1])})" if lib else
                                                  "no runtime library in the build"),
             ] + ([f"- note: {args.note}"] if getattr(args, "note", None) else []) + [
             "", "peer/ours > 1 means Stagegraph is faster. Load: model file to first result in "
             "process (stagegraph: Program::load_file, Session::create, the first run, through the C++ "
             "API in a fresh process, bench/load/load_probe.cc, with the whole graph-run process from "
             "exec to exit beside it; peers: after importing the package). Peak RSS: one process that "
             "loads the model and runs it once.", ""]
    return lines


def dynamic_lines(timings):
    """Each system's median with weights as inputs over its median with them constant
    (mlp_dynamic / mlp, cnn_dynamic / cnn), per thread count."""
    lines = []
    for t, timing in timings.items():
        for key in sorted(k for k in timing if "_dynamic/" in k):
            const = key.replace("_dynamic/", "/")
            parts = []
            for name in systems.SYSTEMS:
                d, c = timing[key].get(name, {}), timing.get(const, {}).get(name, {})
                if "median_ms" in d and "median_ms" in c:
                    parts.append(f"{name} {d['median_ms'] / c['median_ms']:.2f}x")
            if parts:
                lines.append(f"- {key} over {const}, {t} thr.: " + ", ".join(parts))
    if not lines:
        return []
    return (["## Weights as inputs against constant weights", "",
             "Median with the weights (and filters) as inputs over the median with them baked in, "
             "same system, same run (1.00x: no cost for passing them):", ""] + lines + [""])


def not_yet_lines(plan):
    lines = []
    for w in WORKLOADS:
        entry = plan["artifacts"][systems.OURS].get(w)
        if entry and entry["status"] != "ok":
            lines.append(f"- {w}: not yet: {entry['message']}")
        for item in plan["cases"]:
            if item["workload"] == w and systems.OURS in item["failure"]:
                lines.append(f"- {w}/{item['case']}: not yet: {item['failure'][systems.OURS]}")
            elif item["workload"] == w and item["agrees"].get(systems.OURS) is False:
                lines.append(f"- {w}/{item['case']}: wrong result: max relative error "
                             f"{item['error'][systems.OURS]}")
    return ["## What Stagegraph cannot run yet", ""] + (lines or ["- nothing: every workload runs."]) + [""]


# What rnn_grad's loop keeps for its gradient: per iteration, the carried values that
# change (the hidden state, f32[256], and the step counter, i64), appended to tapes;
# the lower bound is what the backward reads back: the state each step starts from.
RNN_STEPS, RNN_HIDDEN = 100, 256
TAPE_BYTES = RNN_STEPS * (4 * RNN_HIDDEN + 8)
TAPE_LOWER_BOUND = RNN_STEPS * 4 * RNN_HIDDEN


def tape_bytes(type_text, steps):
    """Bytes of a tensor type as graph-inspect prints it (`f32[T#2, 256]`), every
    symbolic dim taken as `steps`."""
    dtype, dims = type_text.split("[", 1)
    n = {"f32": 4, "i64": 8, "i32": 4, "f16": 2, "bool": 1}.get(dtype, 4)
    for d in dims.rstrip("]").split(","):
        d = d.strip()
        if d:
            n *= int(d) if d.isdigit() else steps
    return n


def median(timing, key, name):
    return timing.get(key, {}).get(name, {}).get("median_ms")


def gradient_lines(plan, timings, profiles=None):
    """Each system's median for the loss and every gradient over its median for the
    loss alone, same run; the peers' results against ours; what rnn_grad's loop keeps."""
    done = {(i["workload"], i["case"]) for i in plan["cases"]}
    found = []   # (workload, case, threads, {system: (grad ms, forward ms)})
    for grad, fwd in FORWARD_OF.items():
        for item in plan["cases"]:
            if item["workload"] != grad or (fwd, item["case"]) not in done:
                continue
            for t, timing in timings.items():
                pairs = {name: (median(timing, f"{grad}/{item['case']}", name),
                                median(timing, f"{fwd}/{item['case']}", name)) for name in systems.SYSTEMS}
                found.append((grad, item["case"], t, {n: p for n, p in pairs.items() if p[0] and p[1]}))
    names = [n for n in systems.SYSTEMS if any(n in pairs for *_, pairs in found)]
    if not names:
        return []
    rows = [f"| {grad} / {case} | {t} | " + " | ".join(
        f"{pairs[n][0] / pairs[n][1]:.2f}x ({pairs[n][0]:.3f} / {pairs[n][1]:.3f} ms)" if n in pairs else "—"
        for n in names) + " |" for grad, case, t, pairs in found]
    lines = ["## Reverse mode: backward over forward", "",
             "Each system's median for the loss and every gradient (`*_grad`) over its median for the loss "
             "alone (`*_loss`: the same program and data without the gradient), the two timed in turns, round by "
             "round, in one run; the backward "
             "alone is that ratio minus 1. Goal for Stagegraph: at most 3.5x (the backward within 2.5x of the "
             "forward). The gradients are checked against a float64 reference (bench/models/reference.py) "
             "before any timing.", "",
             "| workload | threads | " + " | ".join(names) + " |",
             "|" + "---|" * (len(names) + 2)] + rows + [""]
    agree = []
    for item in plan["cases"]:
        if item["workload"] in FORWARD_OF and item.get("vs_ours"):
            parts = [f"{n} {e:.1e}" if e is not None else f"{n} missing or mis-shaped output"
                     for n, e in item["vs_ours"].items()]
            agree.append(f"- {item['workload']}/{item['case']}: " + ", ".join(parts))
    if agree:
        lines += ["The peers' loss and gradients against Stagegraph's (max |peer - ours| / max |ours| over "
                  "every output):", ""] + agree + [""]
    if any(i["workload"] == "rnn_grad" for i in plan["cases"]):
        lines += [f"What rnn_grad's loop keeps for its gradient: per iteration the carried values that change, "
                  f"the hidden state (f32[{RNN_HIDDEN}], {4 * RNN_HIDDEN:,} bytes) and the step counter (i64, 8 "
                  f"bytes): {RNN_STEPS} x {4 * RNN_HIDDEN + 8:,} = {TAPE_BYTES:,} bytes expected for T = "
                  f"{RNN_STEPS}, beside the lower bound of what the backward reads back, the state each step "
                  f"starts from: {RNN_STEPS} x {4 * RNN_HIDDEN:,} = {TAPE_LOWER_BOUND:,} bytes (xs is an input, "
                  f"read again, not kept).", ""]
        for key, found in sorted((profiles or {}).items()):
            if found.get("tapes") is not None:
                total = sum(tape_bytes(t, RNN_STEPS) for t in found["tapes"])
                lines.append(f"- {key}: the taped While's tapes (graph-inspect): "
                             f"{', '.join(found['tapes']) or 'none'}: {total:,} bytes at T = {RNN_STEPS}.")
            lines.append(f"- {key}: `graph-run --profile`'s memory (one run, 1 thread): {found['memory']}.")
        lines.append("")
    return lines


def training_lines(plan, profiles=None):
    """What a training step allocates beyond its variables (graph-run --profile)."""
    mine = sorted((k, v) for k, v in (profiles or {}).items() if k.split("/")[0] in TRAINING)
    if not mine:
        return []
    lines = ["## Training: one optimizer step", "",
             "`mlp_train` and `rnn_train` run one Adam step (lr 1e-3) per run on state that persists between "
             "runs: Stagegraph's program variables (SPEC §12), JAX's donated parameters and optax state, PyTorch's "
             "`torch.optim.Adam`, Keras's `train_on_batch`. Their tables above give each system's step time and "
             "the peak RSS of a process that loads the model and runs it; the first step's loss is checked against "
             "eager mode. What a Stagegraph step allocates beyond its variables (the weights and Adam's two "
             "moments, held by the Session), from `graph-run --profile` (one step, 1 thread):", ""]
    lines += [f"- {key}: {found['memory']}." for key, found in mine] + [""]
    return lines


def case_lines(plan, item, timings, probes, rates, stamp=None):
    lines = [f"## {item['workload']} / {item['case']}", ""] + ([stamp, ""] if stamp else [])
    lines += case_table(plan, item, timings, probes) + [""]
    lines += lower_bound(item, timings)
    lines += memory_bound(item, timings, rates or {})
    return lines + [f"- {n}" for n in notes_for(plan, item, timings)] + [""]


def load_text_of(args):
    """The machine's load averages (1, 5, 15 min) when the run started and ended."""
    start = getattr(args, "loadavg_start", None)
    fmt = lambda la: " ".join(f"{v:.2f}" for v in la)  # noqa: E731
    return (f"load average {fmt(start)} at the start, " if start else "load average ") + \
        f"{fmt(os.getloadavg())} at the end"


def partial_stamp(plan, timings, args):
    """A section's own header line when only some workloads were run (the file's header
    is the last full run's)."""
    return (f"Measured {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, commit {git_commit(plan['build'])}, "
            f"threads {', '.join(str(t) for t in timings)}, {args.runs} timed runs per system ({args.per_round} per "
            f"round{', --quick' if args.quick else ''}); {load_text_of(args)}; peers {versions() or 'none installed'}"
            + (f". {args.note}" if getattr(args, "note", None) else "") + ".")


def split_sections(text):
    """(the text before the first `## ` heading, [(heading, [lines])])."""
    head, sections = [], []
    for line in text.split("\n"):
        if line.startswith("## "):
            sections.append((line, []))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    return head, sections


def merge(old_text, plan, new_sections, run):
    """RESULTS.md with the sections of the workloads in `run` (and the reverse-mode
    section) replaced by `new_sections`, the others as they were."""
    head, old = split_sections(old_text)
    new = split_sections("\n".join(new_sections))[1]
    new_by_heading = dict(new)

    def workload_of(heading):
        parts = heading[3:].split(" / ")
        return parts[0] if len(parts) == 2 and parts[0] in WORKLOADS else None

    out, placed = [], set()
    for heading, body in old:
        w = workload_of(heading)
        if heading == "## What Stagegraph cannot run yet":
            kept = [l for l in body if l.startswith("- ") and not l.startswith("- nothing")
                    and l[2:].split(":")[0].split("/")[0] not in run]
            fresh = [l for l in new_by_heading.get(heading, []) if l.startswith("- ") and not l.startswith("- nothing")]
            body = [""] + (kept + fresh or ["- nothing: every workload runs."]) + [""]
            placed.add(heading)
        elif w in run or heading in new_by_heading:
            if heading in new_by_heading and heading not in placed:
                out.append((heading, new_by_heading[heading]))
                placed.add(heading)
            continue
        elif w is None and heading not in placed and any(workload_of(h) for h, _ in out):
            # The first section after the case sections: the new ones not placed go before it.
            for h, b in new:
                if h not in placed:
                    out.append((h, b))
                    placed.add(h)
        out.append((heading, body))
    out += [(h, b) for h, b in new if h not in placed]
    return "\n".join(head + [line for h, b in out for line in [h] + b])


def write(plan, timings, probes, args, rates=None, scaling=None, profiles=None):
    run = set(getattr(args, "workloads", None) or WORKLOADS)
    path = os.path.join(BENCH, "RESULTS.md")
    if not set(WORKLOADS) <= run and os.path.exists(path):
        stamp = partial_stamp(plan, timings, args)
        sections = not_yet_lines(plan)
        for item in plan["cases"]:
            sections += case_lines(plan, item, timings, probes, rates, stamp)
        sections += gradient_lines(plan, timings, profiles)
        sections += training_lines(plan, profiles)
        with open(path) as f:
            text = merge(f.read(), plan, sections, run)
        with open(path, "w") as f:
            f.write(text)
        return path
    lines = header(plan, timings, args) + not_yet_lines(plan)
    for item in plan["cases"]:
        lines += case_lines(plan, item, timings, probes, rates)
    lines += gradient_lines(plan, timings, profiles)
    lines += training_lines(plan, profiles)
    lines += dynamic_lines(timings)
    if scaling:
        lines += load_scaling.report_lines(scaling)
    micro = os.path.join(BENCH, "micro", "RESULTS.md")
    if os.path.exists(micro):  # the micro-benchmark figures, recorded by hand with their method
        with open(micro) as f:
            lines += ["## Micro-benchmarks (bench/micro, from bench/micro/RESULTS.md)", ""] + \
                [l.rstrip("\n") for l in f.readlines()[1:]] + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path
