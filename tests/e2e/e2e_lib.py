"""Shared helpers of the end-to-end tests: compile a staged program with
graph-compile, run it with graph-run, and compare with eager mode (SPEC.md §1).

Run by ctest with SG_BUILD_DIR, SG_SOURCE_DIR and PYTHONPATH=compiler/python set.

A program may carry options in a comment line (several lines add up):

    # e2e: N=1,3 M=2,5          symbolic dims: one binding per position (N=1,M=2 then N=3,M=5)
    # e2e: scale.w1=0.03        float input w1 drawn from N(0, 1) * 0.03
    # e2e: range.i=-6,6         input i drawn uniformly from [-6, 6) (ints: integers)
    # e2e: runs=3               three input draws per binding (default 1)

Symbolic dims without an option get two default values each.
"""

import ast
import importlib.util
import os
import re
import subprocess
import sys
import zlib

import numpy as np

SOURCE_DIR = os.environ.get("SG_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("SG_BUILD_DIR", "")
PROGRAMS_DIR = os.path.join(SOURCE_DIR, "tests", "programs")
EXAMPLES_DIR = os.path.join(SOURCE_DIR, "examples")
# Examples checked end to end as they are, from examples/ (never a copy in
# tests/programs): their `# e2e:` options, which an example does not carry.
EXAMPLE_PROGRAMS = {
    "layers": "N=1,3 weights=make_weights",
}
PYTHON_DIR = os.path.join(SOURCE_DIR, "compiler", "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

# Default values of symbolic dims: the k-th distinct symbol of a signature gets
# DEFAULT_DIMS[k][b] in binding b, so that dims never coincide by accident.
DEFAULT_DIMS = [(1, 3), (2, 5), (3, 2), (4, 1), (2, 4)]
TOOL_TIMEOUT_S = 120


class E2EError(Exception):
    """A check failed; the message says which and why."""


# ---- tools ----------------------------------------------------------------------

def tool_path(name):
    if not BUILD_DIR:
        raise E2EError("SG_BUILD_DIR is not set (run through ctest, or set it to the build folder)")
    path = os.path.join(BUILD_DIR, "tools", name)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise E2EError(f"{path} is missing: build it with `cmake --build {BUILD_DIR} --target {name}`")
    return path


def run_tool(name, args, timeout=TOOL_TIMEOUT_S, address_space=None):
    """Runs a tool; returns the CompletedProcess (text output). A timeout is reported
    as returncode None with the reason in stderr. `address_space`: a limit in bytes
    on the tool's virtual memory (RLIMIT_AS), as `ulimit -v` sets."""
    cmd = [tool_path(name)] + [str(a) for a in args]
    limit = None
    if address_space is not None:
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                              preexec_fn=limit)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return subprocess.CompletedProcess(cmd, None, out, f"timed out after {timeout} s")


def describe_result(proc):
    """One line for a failed or unexpected tool run."""
    if proc.returncode is None:
        status = "timed out"
    elif proc.returncode < 0:
        status = f"killed by signal {-proc.returncode} (a crash)"
    else:
        status = f"exit {proc.returncode}"
    lines = (proc.stderr or "").strip().splitlines()
    # A compiler error comes with notes and source lines; the error lines say most.
    shown = [ln for ln in lines if ": error:" in ln][:3] or lines[-6:]
    return f"{status}: {' | '.join(shown) if shown else '(no stderr)'}"


def compile_program(py_path, out_path, extra_args=()):
    proc = run_tool("graph-compile", [py_path, "-o", out_path, *extra_args])
    if proc.returncode != 0:
        raise E2EError(f"graph-compile {os.path.basename(py_path)} failed, {describe_result(proc)}")
    if not os.path.isfile(out_path):
        raise E2EError(f"graph-compile exited 0 but wrote no {out_path}")
    return proc


def write_safetensors(path, tensors):
    """Writes a dict of NumPy arrays as a safetensors file (the eager module's writer)."""
    from stagegraph import write_safetensors as write
    write(path, tensors)


def input_args(inputs, directory):
    """Writes each input as NAME.npy under directory; returns the --input arguments."""
    os.makedirs(directory, exist_ok=True)
    args = []
    for name, value in inputs.items():
        path = os.path.join(directory, f"{name}.npy")
        np.save(path, value, allow_pickle=False)
        args += ["--input", f"{name}={path}"]
    return args


def run_graph(graph, entry, inputs, work_dir, extra_args=()):
    """Runs graph-run on `inputs` (name -> array); returns (proc, output_dir)."""
    out_dir = os.path.join(work_dir, "out")
    os.makedirs(out_dir, exist_ok=True)
    args = [graph]
    if entry:
        args += ["--entry", entry]
    args += input_args(inputs, os.path.join(work_dir, "in"))
    args += ["--output-dir", out_dir, *extra_args]
    return run_tool("graph-run", args), out_dir


# ---- programs -------------------------------------------------------------------

def inspect_graph(graph):
    """(op counts over all functions, node count per function, If/While/Call edge
    count) from graph-inspect's text summary."""
    proc = run_tool("graph-inspect", [graph])
    if proc.returncode != 0:
        raise E2EError(f"graph-inspect failed, {describe_result(proc)}")
    ops, nodes, edges = {}, {}, 0
    function = None
    for line in proc.stdout.splitlines():
        if m := re.match(r"  (\S.*): (\d+) nodes?, \d+ values$", line):
            function = m.group(1)
            nodes[function] = int(m.group(2))
        elif function and (m := re.match(r"    -> .* \((.*)\)$", line)):
            edges += 1
        elif function and (m := re.match(r"    (\w+): (\d+)$", line)):
            ops[m.group(1)] = ops.get(m.group(1), 0) + int(m.group(2))
    return ops, nodes, edges


def list_programs():
    """Paths of tests/programs/*.py and of the EXAMPLE_PROGRAMS in examples/, filtered
    by SG_E2E_PROGRAMS=name,name when set."""
    paths = sorted(os.path.join(PROGRAMS_DIR, f) for f in os.listdir(PROGRAMS_DIR)
                   if f.endswith(".py") and not f.startswith("_"))
    paths += [os.path.join(EXAMPLES_DIR, name + ".py") for name in sorted(EXAMPLE_PROGRAMS)]
    wanted = os.environ.get("SG_E2E_PROGRAMS")
    if wanted:
        keep = {w.strip().removesuffix(".py") for w in wanted.split(",") if w.strip()}
        paths = [p for p in paths if os.path.basename(p)[:-3] in keep]
    return paths


def _is_sg_function(decorator):
    if isinstance(decorator, ast.Attribute):
        return decorator.attr == "function"
    return isinstance(decorator, ast.Name) and decorator.id == "function"


def entry_names(py_path):
    """Top-level functions decorated with @sg.function, in source order."""
    with open(py_path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), py_path)
    return [n.name for n in tree.body
            if isinstance(n, ast.FunctionDef) and any(_is_sg_function(d) for d in n.decorator_list)]


def program_options(py_path):
    """The `# e2e: KEY=VALUE ...` options of a program, as a dict of strings (an
    example's from EXAMPLE_PROGRAMS)."""
    lines = []
    name = os.path.splitext(os.path.basename(py_path))[0]
    if os.path.dirname(os.path.abspath(py_path)) == os.path.abspath(EXAMPLES_DIR) and name in EXAMPLE_PROGRAMS:
        lines = ["# e2e: " + EXAMPLE_PROGRAMS[name]]
    else:
        with open(py_path, encoding="utf-8") as f:
            lines = f.readlines()
    options = {}
    for line in lines:
        m = re.match(r"\s*#\s*e2e:\s*(.*)$", line)
        if not m:
            continue
        for item in m.group(1).split():
            key, sep, value = item.partition("=")
            if not sep:
                raise E2EError(f"{py_path}: bad e2e option {item!r} (KEY=VALUE)")
            options[key] = value
    return options


def load_eager_module(py_path):
    """Imports a program in eager mode under a private module name."""
    name = "sg_e2e_" + os.path.splitext(os.path.basename(py_path))[0]
    spec = importlib.util.spec_from_file_location(name, py_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def signature(fn):
    """[(name, dtype, dims)] of an @sg.function from its annotations: dtype has
    .name/.np, dims is a tuple of ints and symbol names."""
    target = getattr(fn, "__wrapped__", fn)
    annotations = getattr(target, "__annotations__", None) or getattr(fn, "__annotations__", {})
    code = target.__code__
    params = code.co_varnames[:code.co_argcount]
    sig = []
    for p in params:
        if p not in annotations:
            raise E2EError(f"parameter {p!r} of {target.__name__} has no annotation")
        ann = annotations[p]
        sig.append((p, ann.dtype, tuple(ann.dims)))
    return sig


def bindings(sig, options):
    """The symbolic-dim bindings to try: a list of {symbol: size}."""
    symbols = []
    for _, _, dims in sig:
        for d in dims:
            if isinstance(d, str) and d not in symbols:
                symbols.append(d)
    if not symbols:
        return [{}]
    values = {}
    for k, s in enumerate(symbols):
        if s in options:
            values[s] = tuple(int(v) for v in options[s].split(","))
        else:
            values[s] = DEFAULT_DIMS[k % len(DEFAULT_DIMS)]
    count = max(len(v) for v in values.values())
    return [{s: v[min(b, len(v) - 1)] for s, v in values.items()} for b in range(count)]


def make_inputs(sig, binding, seed, options):
    """Random inputs for a signature; deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, dtype, dims in sig:
        shape = tuple(binding[d] if isinstance(d, str) else int(d) for d in dims)
        np_dtype = np.dtype(dtype.np)
        bounds = options.get(f"range.{name}")
        lo, hi = (float(b) for b in bounds.split(",")) if bounds else (None, None)
        if np_dtype.kind == "f":
            if bounds:
                value = rng.uniform(lo, hi, size=shape)
            else:
                value = rng.standard_normal(size=shape) * float(options.get(f"scale.{name}", 1.0))
        elif np_dtype.kind == "i":
            value = rng.integers(int(lo) if bounds else -8, int(hi) if bounds else 8, size=shape)
        elif np_dtype.kind == "b":
            value = rng.random(size=shape) < 0.5
        else:
            raise E2EError(f"input {name}: unsupported dtype {np_dtype}")
        inputs[name] = np.array(value, dtype=np_dtype, order="C")  # ascontiguousarray would make 0-d 1-d
    return inputs


def seed_for(*parts):
    return zlib.crc32(":".join(str(p) for p in parts).encode())


# ---- results --------------------------------------------------------------------

def eager_outputs(result):
    """Names eager results the way the graph file names outputs (SPEC §2): a nested
    result is flattened in order into outputs named by their path with dots."""
    outputs = {}

    def walk(path, v):
        if isinstance(v, dict):
            for k, item in v.items():
                walk(f"{path}.{k}" if path else str(k), item)
        elif isinstance(v, (tuple, list)) and not hasattr(v, "_fields"):
            for i, item in enumerate(v):
                walk(f"{path}.{i}" if path else f"output_{i}", item)
        elif hasattr(v, "_fields") or hasattr(v, "__dataclass_fields__") or hasattr(v, "__dict__"):
            fields = v._fields if hasattr(v, "_fields") else list(vars(v))
            for k in fields:
                walk(f"{path}.{k}" if path else k, getattr(v, k))
        elif v is not None and not (path and isinstance(v, str)):  # settings inside objects are not results
            outputs[path or "output_0"] = np.asarray(v)

    walk("", result)
    return outputs


def compare(name, expected, actual):
    """None when `actual` matches `expected` per SPEC §1, else a message."""
    if expected.shape == (0,) and expected.dtype == np.float32 and actual.ndim >= 1 and actual.size == 0:
        return None  # sg.stack of an empty list: eager mode cannot see the items' type (SPEC §5)
    if actual.dtype != expected.dtype:
        return f"{name}: dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"{name}: shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind != "f":
        if not np.array_equal(actual, expected):
            bad = np.argwhere(actual != expected)
            i = tuple(bad[0])
            return f"{name}: {len(bad)} elements differ, first at {i}: {actual[i]} vs expected {expected[i]}"
        return None
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    if not np.array_equal(np.isnan(e), np.isnan(a)):
        return f"{name}: NaN in different places"
    inf = np.isinf(e)
    if not np.array_equal(inf, np.isinf(a)) or not np.array_equal(e[inf], a[inf]):
        return f"{name}: infinities differ"
    finite = np.isfinite(e)
    if not finite.any():
        return None
    largest = float(np.max(np.abs(e[finite])))
    # SPEC §1 gives the f32 bound; f16 carries ~3 decimal digits, so it gets a looser one.
    rel = 1e-4 if expected.dtype == np.float32 else 1e-2
    tol = rel * largest if largest > 0 else 1e-6
    err = np.where(finite, np.abs(e - a), 0.0)
    i = np.unravel_index(int(np.argmax(err)), err.shape)
    if err[i] > tol:
        return (f"{name}: max abs error {err[i]:.3g} > {tol:.3g} "
                f"at {tuple(int(k) for k in i)}: {a[i]!r} vs expected {e[i]!r}")
    return None


def load_outputs(out_dir, names):
    """Reads OUT/NAME.npy for each name; checks that graph-run wrote nothing else."""
    written = sorted(f[:-4] for f in os.listdir(out_dir) if f.endswith(".npy"))
    if sorted(names) != written:
        raise E2EError(f"graph-run wrote outputs {written}, eager mode gives {sorted(names)}")
    return {n: np.load(os.path.join(out_dir, f"{n}.npy"), allow_pickle=False) for n in names}


class Report:
    """Collects pass/fail lines and prints a summary."""

    def __init__(self, title):
        self.title = title
        self.passed = []
        self.failed = []

    def ok(self, case, detail=""):
        self.passed.append(case)
        print(f"PASS {case}" + (f"  ({detail})" if detail else ""), flush=True)

    def fail(self, case, why):
        self.failed.append((case, why))
        print(f"FAIL {case}: {why}", flush=True)

    def check(self, case, condition, why, detail=""):
        if condition:
            self.ok(case, detail)
        else:
            self.fail(case, why)
        return condition

    def finish(self):
        total = len(self.passed) + len(self.failed)
        print(f"\n{self.title}: {len(self.passed)}/{total} passed")
        for case, why in self.failed:
            print(f"  FAILED {case}: {why}")
        return 0 if total and not self.failed else 1
