"""End to end: at -O2 the examples' layers are fused nodes, and graph-run runs them
with the CPU backend's kernels (not the reference ones) under fused kernels whose
names say what they fused.

examples/mlp.py and examples/cnn.py are compiled at -O0 and -O2 and run with
`graph-run --profile` on the same random inputs (weights scaled by 1/sqrt(fan-in),
as examples/make_inputs.py does). Checked:
  - the -O2 graph (graph-inspect) has the fused nodes (fully_connected,
    conv2d_bias) and no matmul, conv2d, add or relu left; the -O0 graph has the
    unfused matmul/add/relu (conv2d) nodes and no fused ones; the profile lists the
    same nodes as graph-inspect;
  - each fully_connected, conv2d_bias, max_pool2d and softmax node runs a kernel
    that is not `reference`, and the fused kernels' names say `bias`, and `relu`
    exactly where the source applies relu (guarded: see backend_expected);
  - the arena is within 1.05x of its lower bound (profile: memory);
  - the -O2 outputs equal the -O0 outputs within SPEC §1's tolerance.
"""

import os
import re
import sys
import tempfile
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

BATCH = 4
ARENA_SLACK = 1.05
# Nodes that the backend must run with a kernel of its own (log_softmax, reshape and
# shape_dim have only reference kernels today, so they are not listed).
BACKEND_OPS = ("fully_connected", "conv2d_bias", "max_pool2d", "softmax")
FUSED_OPS = ("fully_connected", "conv2d_bias")
# Kernel names of nodes run without a backend kernel (runtime/src/node_kernels.cc).
REFERENCE_KERNELS = ("reference", "reference:scalar", "control-flow")

# What -O2 and -O0 must hold for each example: op -> node count. An op absent from
# `absent` may be there in any number; those in `absent` must not be there at all.
EXAMPLES = {
    "mlp": {
        "-O2": {"fully_connected": 3, "softmax": 1},
        "-O0": {"matmul": 3, "add": 3, "relu": 2, "softmax": 1},
    },
    "cnn": {
        "-O2": {"conv2d_bias": 2, "fully_connected": 1, "max_pool2d": 2},
        "-O0": {"conv2d": 2, "matmul": 1, "add": 3, "relu": 2, "max_pool2d": 2},
    },
}
ABSENT = {
    "-O2": ("matmul", "conv2d", "add", "relu"),
    "-O0": FUSED_OPS,
}

PROFILE_ROW = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\S+)\s+(.*?)\s+(\S+)\s+(\d+)\s+([0-9.]+)\s*$")
MEMORY_LINE = re.compile(r"arena (\d+) bytes, lower bound (\d+) bytes")


# ---- tool output ----------------------------------------------------------------

def inspect_ops(graph):
    """Op -> node count over all functions, from graph-inspect."""
    counts = Counter(lib.inspect_graph(graph)[0])
    if not counts:
        raise lib.E2EError(f"graph-inspect listed no ops for {graph}")
    return counts


def parse_profile(text):
    """(nodes, (arena, lower_bound)) of `graph-run --profile`'s output: nodes is a
    list of dicts with function, node, op, kernel, location, line, calls."""
    nodes, memory, section = [], None, None
    for line in text.splitlines():
        if line.startswith("profile: "):
            section = line[len("profile: "):].strip()
            continue
        if section == "time per node":
            if line.split()[:1] == ["function"]:
                continue  # the column header
            m = PROFILE_ROW.match(line)
            if not m:
                raise lib.E2EError(f"cannot read profile row {line!r}")
            fn, node, op, kernel, location, calls, _ = m.groups()
            # location is FILE:LINE:COL
            parts = location.rsplit(":", 2)
            src_line = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
            nodes.append({"function": fn, "node": int(node), "op": op, "kernel": kernel,
                          "location": location, "line": src_line, "calls": int(calls)})
        elif section == "memory" and (m := MEMORY_LINE.search(line)):
            memory = (int(m.group(1)), int(m.group(2)))
    if not nodes:
        raise lib.E2EError("no 'profile: time per node' rows in graph-run's output")
    if memory is None:
        raise lib.E2EError("no 'profile: memory' arena line in graph-run's output")
    return nodes, memory


def build_has_xnnpack():
    """True/False when the build's CMakeCache says whether the XNNPACK library was
    found (kernels/xnnpack/CMakeLists.txt), None when there is no cache to read."""
    cache = os.path.join(lib.BUILD_DIR, "CMakeCache.txt")
    try:
        with open(cache, encoding="utf-8", errors="replace") as f:
            entries = dict(re.findall(r"^(SG_WITH_XNNPACK|SG_XNNPACK_LIBRARY):\w+=(.*)$", f.read(), re.M))
    except OSError:
        return None
    if "SG_WITH_XNNPACK" not in entries:
        return None
    on = entries["SG_WITH_XNNPACK"].upper() in ("ON", "1", "TRUE", "YES")
    found = bool(entries.get("SG_XNNPACK_LIBRARY")) and not entries["SG_XNNPACK_LIBRARY"].endswith("NOTFOUND")
    return on and found


def backend_expected(profiles):
    """Whether the backend assertions apply, and why.

    The non-reference kernels (sg:..., xnnpack:...) all live in the optional XNNPACK
    backend's library (kernels/xnnpack, with our own kernels/simd): a build without it (SG_WITH_XNNPACK=OFF, or the
    library not installed) runs every node with a reference kernel, and so does a
    CPU that xnnpack_init() rejects. So: when some node of the -O2 runs names a
    non-reference kernel, the backend is there and every listed node must use it.
    When every node names a reference kernel, the backend is taken to be absent and
    those assertions are skipped -- unless the build's CMakeCache says XNNPACK was
    built in, in which case all-reference kernels are a regression and fail."""
    all_reference = all(n["kernel"] in REFERENCE_KERNELS for nodes in profiles for n in nodes)
    if not all_reference:
        return True, "backend kernels in the profile"
    if build_has_xnnpack():
        return True, "the build has XNNPACK but every node ran a reference kernel"
    return False, "every node ran a reference kernel and the build has no XNNPACK backend"


# ---- inputs ---------------------------------------------------------------------

def example_inputs(py_path, seed):
    """Random inputs for the example's entry; weights (float params of rank >= 2 with
    static dims) scaled by 1/sqrt(fan-in) and biases by 0.1, so activations stay
    O(1) and relu cuts about half of them, as with examples/make_inputs.py."""
    module = lib.load_eager_module(py_path)
    (entry,) = lib.entry_names(py_path)
    sig = lib.signature(getattr(module, entry))
    options = {}
    for name, dtype, dims in sig:
        if np.dtype(dtype.np).kind != "f" or any(isinstance(d, str) for d in dims):
            continue
        if len(dims) >= 2:
            options[f"scale.{name}"] = str(1.0 / np.sqrt(float(np.prod(dims[:-1]))))
        else:
            options[f"scale.{name}"] = "0.1"
    binding = {d: BATCH for _, _, dims in sig for d in dims if isinstance(d, str)}
    return entry, lib.make_inputs(sig, binding, seed, options)


# ---- checks ---------------------------------------------------------------------

def check_ops(report, case, counts, level):
    want = EXAMPLES[case][level]
    wrong = {op: counts.get(op, 0) for op, n in want.items() if counts.get(op, 0) != n}
    left = {op: counts[op] for op in ABSENT[level] if counts.get(op, 0)}
    report.check(f"{case} {level} nodes", not wrong and not left,
                 f"graph has {dict(counts)}: expected {want}, none of {list(ABSENT[level])}",
                 ", ".join(f"{op} x{n}" for op, n in sorted(counts.items())))


def check_backend(report, case, nodes, relu_lines):
    """Kernels of the -O2 run: backend kernels, fused names that say what they fused."""
    for n in sorted(nodes, key=lambda n: (n["function"], n["node"])):
        if n["op"] not in BACKEND_OPS:
            continue
        what = f"{case} node {n['node']} {n['op']} ({os.path.basename(n['location'])})"
        report.check(f"{what} runs a backend kernel", n["kernel"] not in REFERENCE_KERNELS,
                     f"kernel {n['kernel']!r}", n["kernel"])
        if n["op"] in FUSED_OPS:
            relu = n["line"] in relu_lines
            name = n["kernel"]
            ok = "bias" in name and (("relu" in name) == relu)
            report.check(f"{what} kernel name says bias{'+relu' if relu else ', no relu'}", ok,
                         f"kernel {name!r}, the source {'applies' if relu else 'does not apply'} relu there")


def check_example(report, case, work_root):
    py_path = os.path.join(lib.SOURCE_DIR, "examples", f"{case}.py")
    work = os.path.join(work_root, case)
    os.makedirs(work)
    results = {}
    try:
        entry, inputs = example_inputs(py_path, lib.seed_for("kernel_choice", case))
        for level in ("-O0", "-O2"):
            graph = os.path.join(work, f"{case}{level}.sgraph")
            lib.compile_program(py_path, graph, [level])
            counts = inspect_ops(graph)
            check_ops(report, case, counts, level)
            proc, out_dir = lib.run_graph(graph, entry, inputs, os.path.join(work, f"run{level}"), ["--profile"])
            if proc.returncode != 0:
                raise lib.E2EError(f"graph-run {level} {lib.describe_result(proc)}")
            nodes, (arena, bound) = parse_profile(proc.stdout)
            profiled = Counter(n["op"] for n in nodes)
            report.check(f"{case} {level} profile lists the graph's nodes", profiled == counts,
                         f"profile ops {dict(profiled)}, graph-inspect {dict(counts)}")
            report.check(f"{case} {level} arena within {ARENA_SLACK}x of its lower bound",
                         arena <= ARENA_SLACK * bound, f"arena {arena} bytes, lower bound {bound} bytes",
                         f"{arena} / {bound} bytes")
            names = sorted(f[:-4] for f in os.listdir(out_dir) if f.endswith(".npy"))
            results[level] = (nodes, lib.load_outputs(out_dir, names))
    except lib.E2EError as e:
        report.fail(f"{case}", str(e))
        return None
    except Exception as e:  # an eager-import failure is a failed case, not a crash of the run
        report.fail(f"{case}", f"{type(e).__name__}: {e}")
        return None

    (nodes0, out0), (nodes2, out2) = results["-O0"], results["-O2"]
    if sorted(out0) != sorted(out2):
        report.fail(f"{case} -O2 outputs", f"-O0 wrote {sorted(out0)}, -O2 {sorted(out2)}")
    else:
        problems = [p for name in out0 if (p := lib.compare(name, out0[name], out2[name]))]
        report.check(f"{case} -O2 outputs equal -O0's", not problems, "; ".join(problems))
    # The source lines that apply relu: those of -O0's relu nodes. A fused node
    # carries the location of the matmul/conv2d it replaced, on the same line.
    relu_lines = {n["line"] for n in nodes0 if n["op"] == "relu"}
    report.check(f"{case} -O0 relu nodes have source lines", relu_lines and None not in relu_lines,
                 f"relu locations {[n['location'] for n in nodes0 if n['op'] == 'relu']}")
    return nodes2, relu_lines


def main():
    report = lib.Report("kernel choice")
    runs = {}
    with tempfile.TemporaryDirectory(prefix="sg_kernels_") as work_root:
        for case in EXAMPLES:
            got = check_example(report, case, work_root)
            if got is not None:
                runs[case] = got
    if runs:
        expected, why = backend_expected([nodes for nodes, _ in runs.values()])
        if expected:
            for case, (nodes, relu_lines) in runs.items():
                check_backend(report, case, nodes, relu_lines)
        else:
            print(f"SKIP backend kernel checks: {why}", flush=True)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
