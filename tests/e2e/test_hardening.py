"""Hostile inputs and resource limits (SPEC.md §9's exit codes): whatever the
program, file, input or memory limit, graph-compile, graph-run and graph-inspect
exit 0, 1, 2 or 3 with a message on stderr, never by a signal, and never damage
what they were not asked to write.

Each numbered case follows the hardening issue's item of that number:
  1  .npy headers nested 100,000 deep (a recursive reader once overflowed); sources
     nested as deep, by brackets or by 100,000-long operator and attribute chains
  2  every tool under address-space limits from 16 MiB up (prlimit/ulimit -v)
  3, 10  an endless loop or recursion ends at --timeout, --max-memory or --max-depth
     with exit 3 and its source line
  4  an if/elif chain's graph grows linearly with its branches
  5  graph-compile refuses endless or huge sources (/dev/zero, a FIFO, 17 MiB)
  6  a shape no runtime can hold is a located compile error
  7  a run-time allocation failure names the op and FILE:LINE:COL
  8  outputs: a device node stays one, /dev/stdout is written in place, -o never
     replaces the model, graph-run never writes through a link and says when it
     replaces files
  9  a byte-order mark is accepted and tabs after spaces are a TabError, as in
     CPython
The whole suite runs in well under a minute.
"""

import os
import stat
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

EXIT_CODES = {0, 1, 2, 3}

SMALL = '''import stagegraph as sg


@sg.function
def f(x: sg.f32[4]):
    return x * 2.0 + 1.0
'''


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)
    return path


class Suite:
    def __init__(self, tmp):
        self.tmp = tmp
        self.report = lib.Report("hardening")

    def path(self, name):
        return os.path.join(self.tmp, name)

    def policy(self, case, proc, allowed=EXIT_CODES):
        """The exit-code policy: an allowed code, a message when not 0, no signal."""
        rc = proc.returncode
        if rc is None or rc < 0:
            return self.report.fail(case, lib.describe_result(proc))
        if rc not in allowed:
            return self.report.fail(case, f"exit {rc} not in {sorted(allowed)}: {lib.describe_result(proc)}")
        if rc != 0 and not proc.stderr.strip():
            return self.report.fail(case, f"exit {rc} with nothing on stderr")
        return self.report.ok(case, f"exit {rc}" + (f": {proc.stderr.strip().splitlines()[0][:100]}" if rc else ""))

    def expect(self, case, proc, code, words=()):
        rc = proc.returncode
        missing = [w for w in words if w not in (proc.stderr or "")]
        if rc != code or missing or (code != 0 and not proc.stderr.strip()):
            why = f"expected exit {code}" + (f" mentioning {missing}" if missing else "")
            return self.report.fail(case, f"{why}; got {lib.describe_result(proc)}")
        return self.report.ok(case, proc.stderr.strip().splitlines()[0][:110] if proc.stderr.strip() else "")

    def compile(self, src, out, *extra, **kw):
        return lib.run_tool("graph-compile", [src, "-o", out, *extra], **kw)

    def run(self, graph, *extra, **kw):
        return lib.run_tool("graph-run", [graph, *extra], **kw)


def npy_with_header(header, data=b""):
    h = header.encode("latin1")
    return b"\x93NUMPY\x02\x00" + len(h).to_bytes(4, "little") + h + data


# ---- 1: recursive readers ------------------------------------------------------

def deep_npy(s, graph):
    for opener in ("(", "[", "(["):
        path = s.path("deep.npy")
        nest = opener * 100000
        with open(path, "wb") as f:
            f.write(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': " + nest + "}", bytes(16)))
        s.expect(f".npy header nested 100000 deep with '{opener}'", s.run(graph, "--input", f"x={path}"), 2,
                 ["nested more than"])


def deep_source(s):
    # Brackets, indentation and operators nested far past the parser's bounds.
    cases = {
        "brackets": "x = " + "(" * 100000 + "1" + ")" * 100000 + "\n",
        "unary minus": "x = " + "-" * 100000 + "1\n",
        "indentation": "".join("    " * i + "if x:\n" for i in range(200)) + "    " * 200 + "pass\n",
        "power chain": "x = 1" + " ** 1" * 50000 + "\n",
    }
    for name, text in cases.items():
        src = write(s.path("deep.py"), "import stagegraph as sg\n" + text)
        s.expect(f"source nested deeply ({name})", s.compile(src, s.path("deep.sgraph")), 1, ["error"])
    # Chains that nest without brackets (the parser loops; the tree is as deep as the
    # chain is long): past 3,000 levels a located error, as CPython's "maximum
    # recursion depth exceeded during compilation"; below it they compile.
    entry = "@sg.function\ndef f(a: sg.f32[4]):\n    return "
    chains = {
        "a 100,000-term sum": entry + " + ".join(["a"] * 100000) + "\n",
        "a 100,000-long attribute chain": entry + "a" + ".T" * 100000 + "\n",
        "100,000 calls in a chain": entry + "a" + "()" * 100000 + "\n",
        "100,000 subscripts in a chain": entry + "a" + "[0]" * 100000 + "\n",
        "a 1,000,000-term constant sum": "N = " + " + ".join(["1"] * 1000000) + "\n",
        "a 100,000-term sum in a lambda": entry + "(lambda: " + " * ".join(["a"] * 100000) + ")()\n",
    }
    for name, text in chains.items():
        src = write(s.path("chain.py"), "import stagegraph as sg\n\n" + text)
        s.expect(f"source nested deeply ({name})", s.compile(src, s.path("chain.sgraph")), 1,
                 ["chain.py:", "error: expression is nested too deeply"])
    src = write(s.path("chain.py"), "import stagegraph as sg\n\n" + entry + " + ".join(["a"] * 2500) + "\n")
    s.expect("a 2,500-term sum compiles", s.compile(src, s.path("chain.sgraph")), 0)


# ---- 2: memory limits ----------------------------------------------------------

HUNGRY = '''import stagegraph as sg

TABLE = [i * 3 for i in range(3000000)]


@sg.function
def f(x: sg.f32[4]):
    return x + float(len(TABLE))
'''


# AddressSanitizer's shadow memory needs far more address space than these limits:
# under the sanitizers (make test-asan sets ASAN_OPTIONS) those cases are skipped.
SANITIZER_BUILD = "ASAN_OPTIONS" in os.environ


def memory_limits(s, graph, mlp_graph, mlp_inputs):
    if SANITIZER_BUILD:
        return s.report.ok("address-space limits", "skipped: sanitizer build")
    hungry = write(s.path("hungry.py"), HUNGRY)
    small = write(s.path("small_limits.py"), SMALL)
    x = s.path("x4.npy")
    np.save(x, np.arange(4, dtype=np.float32))
    for mib in (16, 48, 96, 192, 384):
        limit = mib << 20
        s.policy(f"graph-compile small program, {mib} MiB address space",
                 s.compile(small, s.path(f"lim{mib}.sgraph"), address_space=limit, timeout=60), {0, 1})
        s.policy(f"graph-compile memory-hungry program, {mib} MiB address space",
                 s.compile(hungry, s.path(f"hungry{mib}.sgraph"), address_space=limit, timeout=60), {0, 1})
        s.policy(f"graph-run, {mib} MiB address space",
                 s.run(graph, "--input", f"x={x}", address_space=limit, timeout=60), {0, 2, 3})
        s.policy(f"graph-run mlp with 4 threads, {mib} MiB address space",
                 s.run(mlp_graph, *mlp_inputs, "--threads", "4", address_space=limit, timeout=60), {0, 2, 3})
        s.policy(f"graph-inspect, {mib} MiB address space",
                 lib.run_tool("graph-inspect", [mlp_graph], address_space=limit, timeout=60), {0, 2})
    # With room for everything but the program's own data: the message says so.
    proc = s.compile(hungry, s.path("hungry.sgraph"), address_space=160 << 20, timeout=60)
    s.policy("graph-compile out of memory while staging", proc, {1})
    # prlimit(1), as a user would run it.
    if os.path.exists("/usr/bin/prlimit"):
        proc = subprocess.run(["prlimit", f"--as={64 << 20}", lib.tool_path("graph-run"), mlp_graph, *mlp_inputs],
                              capture_output=True, text=True, errors="replace", timeout=60)
        s.policy("prlimit --as=64MiB graph-run mlp", proc, {0, 2, 3})


# ---- 3, 10: limits of a run as graph-run flags ----------------------------------

ENDLESS = '''import stagegraph as sg


@sg.function
def spin(x: sg.f32[4]):
    while x[0] >= 0.0:
        x = x + 1.0
    return x


def deeper(n, x):
    if n < 0:
        return x
    return deeper(n + 1, x + 1.0)


@sg.function
def recurse(n: sg.i64, x: sg.f32[4096]):
    return deeper(n, x)
'''


def run_limits(s):
    src = write(s.path("endless.py"), ENDLESS)
    graph = s.path("endless.sgraph")
    proc = s.compile(src, graph)
    if proc.returncode != 0:
        return s.report.fail("compile endless programs", lib.describe_result(proc))
    x = s.path("x4.npy")
    np.save(x, np.arange(4, dtype=np.float32))
    start = time.monotonic()
    proc = s.run(graph, "--entry", "spin", "--input", f"x={x}", "--timeout", "0.5", timeout=60)
    took = time.monotonic() - start
    s.expect("an endless staged while stops at --timeout with its source line", proc, 3, [f"{src}:"])
    s.report.check("--timeout 0.5 stops the run promptly", took < 10, f"took {took:.1f} s", f"{took:.2f} s")
    n = s.path("n0.npy")
    np.save(n, np.array(0, dtype=np.int64))
    big = s.path("x4096.npy")
    np.save(big, np.zeros(4096, dtype=np.float32))
    proc = s.run(graph, "--entry", "recurse", "--input", f"n={n}", "--input", f"x={big}",
                 "--max-depth", "100000000", "--max-memory", "64M", timeout=60)
    s.expect("an endless recursion stops at --max-memory, located", proc, 3, [f"{src}:"])
    proc = s.run(graph, "--entry", "recurse", "--input", f"n={n}", "--input", f"x={big}", "--max-depth", "500")
    s.expect("an endless recursion stops at --max-depth", proc, 3, ["500"])
    for bad in (["--timeout", "0"], ["--timeout", "soon"], ["--max-memory", "-1"], ["--max-memory", "12Q"]):
        s.expect(f"graph-run {' '.join(bad)} is a usage error", s.run(graph, *bad), 1, [bad[0]])


# ---- 4: code size linear in source size ----------------------------------------

def elif_chain(n):
    lines = ["import stagegraph as sg", "", "", "@sg.function", "def f(x: sg.f32[4], k: sg.i64):",
             "    if k == 0:", "        y = x + 0.0"]
    for i in range(1, n):
        lines += [f"    elif k == {i}:", f"        y = x * {float(i)}"]
    lines += ["    else:", "        y = x - 1.0", "    return y", ""]
    return "\n".join(lines)


def elif_chains(s):
    sizes, times = {}, {}
    for n in (250, 1000):
        src = write(s.path(f"elif{n}.py"), elif_chain(n))
        out = s.path(f"elif{n}.sgraph")
        start = time.monotonic()
        proc = s.compile(src, out, timeout=120)
        times[n] = time.monotonic() - start
        if proc.returncode != 0:
            return s.report.fail(f"if/elif chain of {n} branches compiles", lib.describe_result(proc))
        sizes[n] = os.path.getsize(out)
    ratio = sizes[1000] / sizes[250]
    s.report.check("if/elif chain: 4x the branches, at most ~4x the graph", ratio < 5.0,
                   f"graph sizes {sizes} grow {ratio:.1f}x for 4x the branches (quadratic?)",
                   f"{sizes[250]} -> {sizes[1000]} bytes ({ratio:.2f}x); {times[250]:.2f} s -> {times[1000]:.2f} s")
    # And it runs: branch 777 of 1000.
    k = s.path("k.npy")
    np.save(k, np.array(777, dtype=np.int64))
    x = s.path("x4.npy")
    np.save(x, np.arange(4, dtype=np.float32))
    out_dir = s.path("elif_out")
    proc = s.run(s.path("elif1000.sgraph"), "--input", f"x={x}", "--input", f"k={k}", "--output-dir", out_dir)
    if proc.returncode == 0:
        got = np.load(os.path.join(out_dir, os.listdir(out_dir)[0]))
        s.report.check("if/elif chain of 1000 runs the right branch", np.allclose(got, np.arange(4) * 777.0),
                       f"got {got}")
    else:
        s.report.fail("if/elif chain of 1000 runs", lib.describe_result(proc))


# ---- 5: graph-compile bounds what it reads --------------------------------------

def bounded_reads(s):
    s.expect("graph-compile /dev/zero", s.compile("/dev/zero", s.path("zero.sgraph"), timeout=30), 1,
             ["not a regular file"])
    fifo = s.path("src.fifo")
    os.mkfifo(fifo)
    s.expect("graph-compile of a FIFO (no writer: must not block)", s.compile(fifo, s.path("fifo.sgraph"), timeout=30),
             1, ["not a regular file"])
    huge = s.path("huge.py")
    with open(huge, "wb") as f:
        f.truncate(17 << 20)  # sparse: 17 MiB of NUL bytes, nothing written
    s.expect("graph-compile of a 17 MiB source", s.compile(huge, s.path("huge.sgraph"), timeout=30), 1,
             ["over the limit"])
    s.expect("graph-compile --weights /dev/zero",
             s.compile(write(s.path("w.py"), SMALL), s.path("w.sgraph"), "--weights", "/dev/zero"), 1,
             ["not a regular file"])


# ---- 6: sizes the runtime cannot hold -------------------------------------------

def impossible_sizes(s):
    for shape in ("(2**62, 2**62)", "(2**20, 2**20, 2**10)"):
        text = ("import stagegraph as sg\n\n\n@sg.function\ndef f(x: sg.f32[4]):\n"
                f"    y = sg.zeros({shape})\n    return y\n")
        src = write(s.path("big.py"), text)
        s.expect(f"sg.zeros({shape}) is a located compile error", s.compile(src, s.path("big.sgraph")), 1,
                 [f"{src}:6:"])


RUNTIME_HUGE = '''import stagegraph as sg


@sg.function
def f(n: sg.i64):
    y = sg.zeros((n, n)) + 1.0
    return sg.sum(y)
'''


def runtime_allocation(s):
    """7: an allocation that fails at run time names the op and FILE:LINE:COL."""
    src = write(s.path("runtime_huge.py"), RUNTIME_HUGE)
    graph = s.path("runtime_huge.sgraph")
    proc = s.compile(src, graph)
    if proc.returncode != 0:
        return s.report.fail("compile a program sized at run time", lib.describe_result(proc))
    n = s.path("n.npy")
    np.save(n, np.array(200000, dtype=np.int64))  # 160 GB of f32
    if SANITIZER_BUILD:
        return s.report.ok("a run-time allocation failure is located", "skipped: sanitizer build")
    proc = s.run(graph, "--input", f"n={n}", address_space=2 << 30, timeout=60)
    s.expect("a run-time allocation failure is located", proc, 3, [f"{src}:6:"])


# ---- 8: output safety -----------------------------------------------------------

def output_safety(s, graph):
    src = write(s.path("safe.py"), SMALL)
    # A character device made here (as /dev/null is 1,3), or a FIFO where mknod is
    # not allowed: written in place, and still a device (or FIFO) afterwards.
    dev = s.path("null.dev")
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        proc = s.compile(src, dev)
        s.expect("graph-compile -o a character device", proc, 0)
        s.report.check("the character device is still one", stat.S_ISCHR(os.lstat(dev).st_mode),
                       f"mode is now {oct(os.lstat(dev).st_mode)}")
    except PermissionError:
        s.report.ok("graph-compile -o a character device", "skipped: mknod not permitted here; the FIFO case stands")
    fifo = s.path("out.fifo")
    os.mkfifo(fifo)
    got = bytearray()

    def drain():
        with open(fifo, "rb") as f:
            got.extend(f.read())
    reader = threading.Thread(target=drain)
    reader.start()
    proc = s.compile(src, fifo, timeout=30)
    reader.join(timeout=30)
    s.expect("graph-compile -o a FIFO", proc, 0)
    s.report.check("the FIFO is still one and carried the graph",
                   stat.S_ISFIFO(os.lstat(fifo).st_mode) and bytes(got[:8]) == b"SGRAPH\0\1",
                   f"mode {oct(os.lstat(fifo).st_mode)}, {len(got)} bytes read")
    proc = subprocess.run([lib.tool_path("graph-compile"), src, "-o", "/dev/stdout"], capture_output=True, timeout=60)
    s.report.check("graph-compile -o /dev/stdout writes the graph to stdout",
                   proc.returncode == 0 and proc.stdout[:8] == b"SGRAPH\0\1",
                   f"exit {proc.returncode}, stdout starts {proc.stdout[:8]!r}, stderr {proc.stderr[:200]!r}")

    before = open(src).read()
    s.expect("graph-compile -o its own source", s.compile(src, src), 1, ["refusing to overwrite"])
    s.report.check("the source is unchanged", open(src).read() == before, "the source was replaced")
    link = s.path("src_link.py")
    os.symlink(src, link)
    s.expect("graph-compile -o a link to its source", s.compile(src, link), 1, ["refusing to overwrite"])

    # -o through a link: the link stays, its target gets the graph.
    target = s.path("real.sgraph")
    write(target, "old")
    glink = s.path("via_link.sgraph")
    os.symlink(target, glink)
    s.expect("graph-compile -o a link to a graph", s.compile(src, glink), 0)
    s.report.check("the link is still a link and its target holds the graph",
                   os.path.islink(glink) and open(target, "rb").read(8) == b"SGRAPH\0\1", "link or target wrong")

    # graph-run: a link in --output-dir is never followed.
    x = s.path("x4.npy")
    np.save(x, np.arange(4, dtype=np.float32))
    out_dir = s.path("outs")
    os.makedirs(out_dir)
    victim = write(s.path("victim.txt"), "precious")
    names = [ln.split(":")[0] for ln in s.run(graph, "--input", f"x={x}").stdout.splitlines() if ":" in ln]
    out_name = names[0] if names else "output_0"
    os.symlink(victim, os.path.join(out_dir, out_name + ".npy"))
    proc = s.run(graph, "--input", f"x={x}", "--output-dir", out_dir)
    s.expect("graph-run with a link in --output-dir", proc, 3, ["symbolic link"])
    s.report.check("the link's target is untouched", open(victim).read() == "precious", "graph-run wrote through")
    os.remove(os.path.join(out_dir, out_name + ".npy"))
    s.expect("graph-run into an empty --output-dir", s.run(graph, "--input", f"x={x}", "--output-dir", out_dir), 0)
    s.expect("graph-run says when it replaces outputs", s.run(graph, "--input", f"x={x}", "--output-dir", out_dir),
             0, ["replaced existing files"])
    os.remove(os.path.join(out_dir, out_name + ".npy"))
    os.mkfifo(os.path.join(out_dir, out_name + ".npy"))
    s.expect("graph-run with a FIFO in --output-dir (must not block)",
             s.run(graph, "--input", f"x={x}", "--output-dir", out_dir, timeout=30), 3, ["not a regular file"])


# ---- 9: the source reader as CPython --------------------------------------------

def eager_parity(s):
    bom = write(s.path("bom.py"), b"\xef\xbb\xbf" + SMALL.encode(), "wb")
    s.expect("a UTF-8 byte-order mark is accepted", s.compile(bom, s.path("bom.sgraph")), 0)
    tabs = SMALL.replace("    return x * 2.0 + 1.0", "    y = x * 2.0\n  \treturn y + 1.0")
    tab_src = write(s.path("tabs.py"), tabs)
    s.expect("spaces then a tab in one block's indentation", s.compile(tab_src, s.path("tabs.sgraph")), 1,
             ["TabError", f"{tab_src}:7:"])
    py = subprocess.run([sys.executable, "-c", f"compile(open({tab_src!r}).read(), 'x', 'exec')"],
                        capture_output=True, text=True)
    s.report.check("CPython agrees (TabError)", "TabError" in py.stderr, py.stderr.strip()[-200:])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        s = Suite(tmp)
        graph = s.path("small.sgraph")
        proc = s.compile(write(s.path("small.py"), SMALL), graph)
        mlp_graph = s.path("mlp.sgraph")
        proc2 = s.compile(os.path.join(lib.SOURCE_DIR, "examples", "mlp.py"), mlp_graph)
        if proc.returncode != 0 or proc2.returncode != 0:
            print(lib.describe_result(proc), lib.describe_result(proc2))
            return 1
        rng = np.random.default_rng(0)
        mlp_inputs = []
        for name, shape in {"x": (2, 784), "w1": (784, 512), "b1": (512,), "w2": (512, 512), "b2": (512,),
                            "w3": (512, 10), "b3": (10,)}.items():
            path = s.path(f"mlp_{name}.npy")
            np.save(path, rng.standard_normal(shape).astype(np.float32))
            mlp_inputs += ["--input", f"{name}={path}"]
        started = time.monotonic()
        for part in (lambda: deep_npy(s, graph), lambda: deep_source(s),
                     lambda: memory_limits(s, graph, mlp_graph, mlp_inputs), lambda: elif_chains(s), lambda: run_limits(s),
                     lambda: bounded_reads(s), lambda: impossible_sizes(s), lambda: runtime_allocation(s), lambda: output_safety(s, graph),
                     lambda: eager_parity(s)):
            part()
        print(f"hardening suite: {time.monotonic() - started:.1f} s")
        return s.report.finish()


if __name__ == "__main__":
    sys.exit(main())
