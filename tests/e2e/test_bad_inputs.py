"""Bad inputs and bad graph files given to graph-run (SPEC.md §9, §10).

Everything rejected while loading the graph or binding inputs must exit 2 with a
message (naming the input, for input errors); usage errors exit 1; nothing may
crash (a negative return code is a signal) or hang. Corrupt graphs include random
byte mutations whose header CRCs are recomputed, so that only the FlatBuffers
verifier and the loader's semantic checks stand between them and the executor.
SG_MUTATION_CASES sets how many mutated files to try (default 300).
"""

import ctypes
import os
import random
import re
import struct
import sys
import tempfile
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

# tests/programs/mlp.py's signature, spelled out so this test does not depend on
# the eager module.
MLP_INPUTS = {"x": (2, 784), "w1": (784, 512), "b1": (512,), "w2": (512, 512), "b2": (512,),
              "w3": (512, 10), "b3": (10,)}
HEADER = struct.Struct("<8sHHIQQQQII8s")


def mlp_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(s) * 0.04).astype(np.float32) for k, s in MLP_INPUTS.items()}


def names_word(text, word):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])", text) is not None


class Cases:
    def __init__(self, work):
        self.work = work
        self.report = lib.Report("bad inputs")
        self.count = 0

    def path(self, name):
        self.count += 1
        return os.path.join(self.work, f"{self.count:04d}_{name}")

    def expect(self, case, proc, code, names=None):
        """Exit `code`, a message on stderr, and `names` (an input) in it."""
        if proc.returncode is None or proc.returncode < 0:
            return self.report.fail(case, lib.describe_result(proc))
        if proc.returncode != code:
            return self.report.fail(case, f"expected exit {code}, got {lib.describe_result(proc)}")
        if code != 0 and not proc.stderr.strip():
            return self.report.fail(case, f"exit {code} without a message on stderr")
        if names and not names_word(proc.stderr, names):
            return self.report.fail(case, f"message does not name {names!r}: {proc.stderr.strip()[:300]}")
        self.report.ok(case, proc.stderr.strip().splitlines()[0][:120] if proc.stderr.strip() else "")

    def graph_run(self, args, timeout=60):
        return lib.run_tool("graph-run", args, timeout=timeout)


def write_inputs(cases, inputs, tag):
    return lib.input_args(inputs, cases.path(tag))


def save_inputs(c, inputs, tag):
    """Writes the inputs; returns {name: path}."""
    directory = c.path(tag)
    os.makedirs(directory)
    paths = {}
    for k, v in inputs.items():
        paths[k] = os.path.join(directory, f"{k}.npy")
        np.save(paths[k], v, allow_pickle=False)
    return paths


def as_args(paths):
    args = []
    for k, p in paths.items():
        args += ["--input", f"{k}={p}"]
    return args


def input_cases(c, graph):
    good = mlp_inputs()
    paths = save_inputs(c, good, "good")
    c.expect("valid inputs run", c.graph_run([graph, *as_args(paths)]), 0)

    def with_input(name, value=None, raw=None, tag=""):
        """The good inputs with `name` replaced by an array or by raw file bytes."""
        path = c.path(f"{name}_{tag}.npy")
        if raw is not None:
            with open(path, "wb") as f:
                f.write(raw)
        else:
            np.save(path, value, allow_pickle=False)
        return c.graph_run([graph, *as_args(dict(paths, **{name: path}))])

    x = good["x"]
    c.expect("dtype f64 for f32", with_input("x", x.astype(np.float64), tag="f64"), 2, "x")
    c.expect("dtype i32 for f32", with_input("x", x.astype(np.int32), tag="i32"), 2, "x")
    c.expect("dtype f16 for f32", with_input("w1", good["w1"].astype(np.float16), tag="f16"), 2, "w1")
    c.expect("unsupported dtype u8", with_input("b1", good["b1"].astype(np.uint8), tag="u8"), 2, "b1")
    c.expect("wrong static dim", with_input("x", np.zeros((2, 783), np.float32), tag="dim"), 2, "x")
    c.expect("wrong static dim of a weight", with_input("w1", np.zeros((784, 511), np.float32), tag="dim"), 2, "w1")
    c.expect("wrong rank", with_input("x", np.zeros((784,), np.float32), tag="rank"), 2, "x")
    c.expect("scalar for a matrix", with_input("w3", np.float32(1.0), tag="scalar"), 2, "w3")
    c.expect("big-endian data", with_input("b3", good["b3"].astype(">f4"), tag="be"), 2, "b3")
    c.expect("Fortran order", with_input("w2", np.asfortranarray(good["w2"]), tag="fortran"), 2, "w2")

    with open(paths["x"], "rb") as f:
        npy = f.read()
    rng = random.Random(1)
    noise = bytes(rng.getrandbits(8) for _ in range(4096))
    c.expect("npy of random bytes", with_input("x", raw=noise, tag="rand"), 2, "x")
    c.expect("empty npy", with_input("x", raw=b"", tag="empty"), 2, "x")
    for cut in (6, 10, 40, 127, 128, 129, len(npy) // 2, len(npy) - 1):
        c.expect(f"npy truncated to {cut} bytes", with_input("x", raw=npy[:cut], tag=f"cut{cut}"), 2, "x")
    bad_header = npy.replace(b"'shape': (2, 784)", b"'shape': (2, 7xx)", 1)
    c.expect("npy with a corrupt header", with_input("x", raw=bad_header, tag="hdr"), 2, "x")

    # A device that never ends: only the bytes a .npy prelude needs may be read.
    if os.path.exists("/dev/zero"):
        c.expect("input is /dev/zero", c.graph_run([graph, *as_args(dict(paths, x="/dev/zero"))], timeout=30),
                 2, "x")
    # A header that announces far more data than the file holds is refused as
    # truncated, not answered by allocating that much.
    header_len = struct.unpack_from("<H", npy, 8)[0]
    big = "{'descr': '<f4', 'fortran_order': False, 'shape': (262144, 1048576), }"
    big = big.ljust(header_len - 1) + "\n"
    lie = npy[:8] + struct.pack("<H", len(big)) + big.encode() + npy[10 + header_len:]
    c.expect("npy header announcing a terabyte", with_input("x", raw=lie, tag="tb"), 2, "x")

    missing = dict(paths, x=c.path("missing.npy"))
    c.expect("input file does not exist", c.graph_run([graph, *as_args(missing)]), 2, "x")
    c.expect("input is a directory", c.graph_run([graph, *as_args(dict(paths, x=c.work))]), 2, "x")
    c.expect("unknown input name", c.graph_run([graph, *as_args(dict(paths, bogus=paths["x"]))]), 2, "bogus")
    c.expect("missing input", c.graph_run([graph, *as_args({k: p for k, p in paths.items() if k != "b3"})]), 2, "b3")


def read_header(data):
    return list(HEADER.unpack_from(data, 0))


def write_header(fields):
    return HEADER.pack(*fields)


FLAG_DATA_XXH3 = 1


def xxh3_64(data):
    """XXH3-64 (seed 0) through libxxhash, the library the header inlines."""
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(bytes(data), len(data))


def refresh_crcs(data):
    """Recomputes both checksums from the (possibly mutated) header's own offsets:
    the table's CRC-32, and the data segment's XXH3-64 (format 1.1) or CRC-32."""
    f = read_header(data)
    t_off, t_size, d_off, d_size = f[4], f[5], f[6], f[7]
    if t_off + t_size <= len(data):
        f[8] = zlib.crc32(data[t_off:t_off + t_size]) & 0xFFFFFFFF
    if d_off + d_size <= len(data):
        if f[3] & FLAG_DATA_XXH3:
            f[10] = struct.pack("<Q", xxh3_64(data[d_off:d_off + d_size]))
        else:
            f[9] = zlib.crc32(data[d_off:d_off + d_size]) & 0xFFFFFFFF
    return write_header(f) + data[HEADER.size:]


def graph_file_cases(c, graph, inputs):
    data = open(graph, "rb").read()
    h = read_header(data)
    table_end = h[4] + h[5]

    def run_bytes(tag, blob, extra=()):
        path = c.path(f"{tag}.sgraph")
        with open(path, "wb") as f:
            f.write(blob)
        return c.graph_run([path, *inputs, *extra])

    c.expect("graph file does not exist", c.graph_run([c.path("nothing.sgraph"), *inputs]), 2)
    c.expect("graph is a directory", c.graph_run([c.work, *inputs]), 2)
    lengths = sorted({0, 1, 7, 8, 12, 16, 48, 63, 64, 65, 100, h[4] + h[5] // 2, table_end - 1, table_end,
                      h[6], len(data) - 64, len(data) - 1} | {random.Random(2).randrange(len(data)) for _ in range(8)})
    for n in lengths:
        if 0 <= n < len(data):
            c.expect(f"graph truncated to {n} bytes", run_bytes(f"cut{n}", data[:n]), 2)

    def patched(index, value):
        f = list(h)
        f[index] = value
        return write_header(f) + data[HEADER.size:]

    c.expect("bad magic", run_bytes("magic", b"SGRAPH\0\2" + data[8:]), 2)
    proc = run_bytes("major", refresh_crcs(patched(1, h[1] + 1)))
    c.expect("newer major version", proc, 2)
    if proc.returncode == 2 and not (str(h[1] + 1) in proc.stderr and str(h[1]) in proc.stderr):
        c.report.fail("newer major version message", f"does not give both versions: {proc.stderr.strip()[:200]}")
    c.expect("table offset past the end", run_bytes("toff", patched(4, len(data) + 64)), 2)
    c.expect("table size past the end", run_bytes("tsize", patched(5, len(data))), 2)
    c.expect("huge data size", run_bytes("dsize", patched(7, 1 << 62)), 2)
    c.expect("misaligned data offset", run_bytes("doff", refresh_crcs(patched(6, h[6] + 8))), 2)
    c.expect("wrong table CRC", run_bytes("tcrc", patched(8, h[8] ^ 1)), 2)
    # The data segment's checksum is checked by default (format 1.1: XXH3-64 at
    # offset 56); --no-verify-data skips it.
    wrong_xxh3 = bytes([h[10][0] ^ 1]) + h[10][1:]
    c.expect("wrong data checksum", run_bytes("dsum", patched(10, wrong_xxh3)), 2, "checksum")
    c.expect("wrong data checksum, --verify-data", run_bytes("dsum1", patched(10, wrong_xxh3), ["--verify-data"]), 2)
    c.expect("wrong data checksum, --no-verify-data",
             run_bytes("dsum2", patched(10, wrong_xxh3), ["--no-verify-data"]), 0)
    flipped = bytearray(data)
    flipped[h[6]] ^= 0x01  # a changed constant byte
    c.expect("changed constant", run_bytes("dbyte", bytes(flipped)), 2, "checksum")
    # A file of format 1.0 (flags 0, the data's CRC-32 at offset 52) still loads.
    old = list(h)
    old[2], old[3], old[10] = 0, 0, bytes(8)
    old_file = refresh_crcs(write_header(old) + data[HEADER.size:])
    c.expect("format 1.0 file (CRC-32 data checksum)", run_bytes("v10", old_file), 0)
    old_flipped = bytearray(old_file)
    old_flipped[h[6]] ^= 0x01
    c.expect("format 1.0 file, changed constant", run_bytes("v10b", bytes(old_flipped)), 2, "CRC-32")

    # Random mutations of the table with valid CRCs: the file may still be a valid
    # graph (a changed name, say), so exit 0 or a run-time failure (3) are fine;
    # what is not is a crash, a hang, or a usage error.
    rng = random.Random(3)
    cases = int(os.environ.get("SG_MUTATION_CASES", "300"))
    outcomes = {}
    failures = []
    for k in range(cases):
        blob = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 4, 16))):
            pos = rng.randrange(h[4], table_end)
            blob[pos] = rng.randrange(256) if rng.random() < 0.7 else blob[pos] ^ (1 << rng.randrange(8))
        path = c.path(f"mut{k}.sgraph")
        with open(path, "wb") as f:
            f.write(refresh_crcs(bytes(blob)))
        proc = c.graph_run([path, *inputs], timeout=30)
        rc = proc.returncode
        outcomes[rc] = outcomes.get(rc, 0) + 1
        if rc is None or rc < 0 or rc not in (0, 2, 3) or (rc != 0 and not proc.stderr.strip()):
            failures.append(f"mutation {k}: {lib.describe_result(proc)} (file kept at {path})")
        else:
            os.remove(path)
    summary = ", ".join(f"exit {k}: {v}" for k, v in sorted(outcomes.items(), key=lambda kv: str(kv[0])))
    c.report.check(f"{cases} mutated graphs", not failures, "; ".join(failures[:5]), summary)


def usage_cases(c, graph, inputs, multi_graph):
    c.expect("graph-run --help", c.graph_run(["--help"]), 0)
    c.expect("graph-run unknown flag", c.graph_run([graph, *inputs, "--no-such-flag"]), 1)
    c.expect("graph-run no graph", c.graph_run([]), 1)
    for flag, value in (("--threads", "0"), ("--threads", "-2"), ("--threads", "two"), ("--threads", "100000"),
                        ("--bench", "0"), ("--max-depth", "0"), ("--max-depth", "x"), ("--device", "tpu")):
        proc = c.graph_run([graph, *inputs, flag, value], timeout=30)
        c.expect(f"graph-run {flag} {value}", proc, 1, flag.lstrip("-"))
    for flag in ("--threads", "--entry", "--input", "--output-dir"):
        c.expect(f"graph-run {flag} without a value", c.graph_run([graph, *inputs, flag]), 1, flag.lstrip("-"))
    for bad in ("x", "=x.npy", "x="):
        c.expect(f"graph-run --input {bad}", c.graph_run([graph, *inputs, "--input", bad]), 1, "input")
    for bad in ("cuda:", "cuda:x", "cuda:-1", "gpu"):
        c.expect(f"graph-run --device {bad}", c.graph_run([graph, *inputs, "--device", bad]), 1, "device")
    # A build without the CUDA backend refuses the flag (exit 1); one with it, on a
    # machine without a GPU, refuses the device (exit 2, "no CUDA device: ...");
    # on a GPU it runs (the GPU suite compares its results).
    proc = c.graph_run([graph, *inputs, "--device", "cuda"])
    if proc.returncode == 1:
        c.expect("graph-run --device cuda without the CUDA backend", proc, 1, "cuda")
    elif proc.returncode == 2:
        c.expect("graph-run --device cuda without a GPU", proc, 2, "no CUDA device")
    else:
        c.expect("graph-run --device cuda on a GPU", proc, 0)
    proc = c.graph_run([multi_graph])
    c.expect("two entries without --entry", proc, 1)
    if proc.returncode == 1 and not (names_word(proc.stderr, "affine") and names_word(proc.stderr, "mixed")):
        c.report.fail("two entries message", f"does not list the entries: {proc.stderr.strip()[:200]}")
    c.expect("unknown --entry", c.graph_run([multi_graph, "--entry", "nosuch"]), 1, "nosuch")
    c.expect("graph-compile --help", lib.run_tool("graph-compile", ["--help"]), 0)
    proc = lib.run_tool("graph-compile", [c.path("absent.py")])
    c.expect("graph-compile unreadable model", proc, 1)
    if proc.returncode == 1 and "cannot read" not in proc.stderr:
        c.report.fail("graph-compile unreadable message", proc.stderr.strip()[:200])
    proc = lib.run_tool("graph-compile", [c.work])
    c.expect("graph-compile of a directory", proc, 1)
    if proc.returncode == 1 and "directory" not in proc.stderr:
        c.report.fail("graph-compile of a directory: message", proc.stderr.strip()[:200])
    proc = lib.run_tool("graph-compile", [os.path.join(lib.PROGRAMS_DIR, "mlp.py"), "-o", c.path("w.sgraph"),
                                          "--weights", c.path("absent.safetensors")])
    c.expect("graph-compile --weights of a missing file", proc, 1)
    if proc.returncode == 1 and "weights" not in proc.stderr:
        c.report.fail("graph-compile --weights of a missing file: message", proc.stderr.strip()[:200])
    c.expect("graph-compile unknown flag",
             lib.run_tool("graph-compile", [os.path.join(lib.PROGRAMS_DIR, "mlp.py"), "--frobnicate"]), 1)


def symbolic_cases(c, multi_graph):
    """affine(x: [N, 4], row: [1, 4], col: [N, 1], s: f32) from broadcasting.py."""
    rng = np.random.default_rng(5)
    good = {"x": rng.standard_normal((3, 4)).astype(np.float32),
            "row": rng.standard_normal((1, 4)).astype(np.float32),
            "col": rng.standard_normal((3, 1)).astype(np.float32),
            "s": np.array(0.5, dtype=np.float32)}
    args = write_inputs(c, good, "affine")
    c.expect("symbolic entry runs", c.graph_run([multi_graph, "--entry", "affine", *args]), 0)
    bad = dict(good, col=rng.standard_normal((2, 1)).astype(np.float32))
    args = write_inputs(c, bad, "affine_bad")
    proc = c.graph_run([multi_graph, "--entry", "affine", *args])
    c.expect("symbolic dims disagree", proc, 2)
    if proc.returncode == 2 and not (names_word(proc.stderr, "col") or names_word(proc.stderr, "N")):
        c.report.fail("symbolic dims message", f"names neither the input nor the dim: {proc.stderr.strip()[:200]}")
    args = write_inputs(c, dict(good, s=np.ones((1,), np.float32)), "affine_rank")
    c.expect("1-d array for a scalar", c.graph_run([multi_graph, "--entry", "affine", *args]), 2, "s")


OUTPUTS_PROGRAM = """import stagegraph as sg

@sg.function
def stats(x: sg.f32["N"]):
    return {"total": sg.sum(x), "doubled": x * 2.0, "count": len(x), "positive": x > 0.0}

@sg.function
def clash(x: sg.f32[2]):
    return {"a/b": x, "a_b": x + 1.0}
"""


def output_dir_cases(c):
    """--output-dir writes DIR/NAME.npy per result, 0-d for scalars (SPEC.md §9)."""
    source = c.path("outputs.py")
    graph = c.path("outputs.sgraph")
    with open(source, "w") as f:
        f.write(OUTPUTS_PROGRAM)
    try:
        lib.compile_program(source, graph)
    except lib.E2EError as e:
        return c.report.fail("compile the outputs program", str(e))
    x = np.array([1.5, -2.0, 3.0], np.float32)
    args = write_inputs(c, {"x": x}, "outputs_in")
    out = os.path.join(c.path("outputs"), "not", "yet")
    proc = c.graph_run([graph, "--entry", "stats", *args, "--output-dir", out])
    c.expect("--output-dir that does not exist yet", proc, 0)
    expected = {"total": np.float32(x.sum()), "doubled": x * 2, "count": np.int64(3), "positive": x > 0}
    for name, want in expected.items():
        path = os.path.join(out, f"{name}.npy")
        if not os.path.exists(path):
            c.report.fail(f"--output-dir {name}.npy", "not written")
            continue
        got = np.load(path, allow_pickle=False)
        want = np.asarray(want)
        c.report.check(f"--output-dir {name}.npy", got.dtype == want.dtype and got.shape == want.shape
                       and np.array_equal(got, want), f"{got.dtype}{got.shape} {got!r}, expected {want!r}")
    proc = c.graph_run([graph, "--entry", "clash", *write_inputs(c, {"x": x[:2]}, "clash_in"),
                        "--output-dir", c.path("clash")])
    c.expect("two outputs that map to one file", proc, 3, "a_b")


BIG_WEIGHTS_PROGRAM = """import stagegraph as sg


@sg.function
def dense(x: sg.f32[1, 4096]) -> sg.f32[1, 4096]:
    return x @ sg.weight("w")
"""


def memory_limit_cases(c):
    """Little memory is a clear error or a slower kernel, never a crash or a hang.

    A 4096 x 4096 layer (64 MiB of weights) under address-space limits from 60 to
    400 MiB, on two threads: the map of the file, the packed weights, XNNPACK's
    copy and the pool's threads each run out somewhere in that range. Exit 0 (a
    kernel that needs less memory ran), 2 (rejected while loading) or 3 (during the
    run) all pass; a signal or a timeout fails. Skipped under the sanitizers, whose
    shadow memory needs far more address space than these limits.
    """
    if "ASAN_OPTIONS" in os.environ:
        return c.report.ok("memory limits", "skipped: sanitizer build")
    source, weights, graph = c.path("big.py"), c.path("big.safetensors"), c.path("big.sgraph")
    with open(source, "w") as f:
        f.write(BIG_WEIGHTS_PROGRAM)
    w = np.full((4096, 4096), 1.0 / 4096, np.float32)
    header = ('{"w": {"dtype": "F32", "shape": [4096, 4096], "data_offsets": [0, %d]}}' % w.nbytes).encode()
    with open(weights, "wb") as f:
        f.write(len(header).to_bytes(8, "little") + header + w.tobytes())
    try:
        lib.compile_program(source, graph, ["--weights", weights])
    except lib.E2EError as e:
        return c.report.fail("compile the big-weights program", str(e))
    os.remove(weights)
    args = write_inputs(c, {"x": np.ones((1, 4096), np.float32)}, "big_in")
    outcomes = {}
    for mib in range(60, 401, 20):
        proc = lib.run_tool("graph-run", [graph, *args, "--threads", "2"], timeout=60, address_space=mib << 20)
        case = f"graph-run under a {mib} MiB address-space limit"
        if proc.returncode is None or proc.returncode < 0:
            c.report.fail(case, lib.describe_result(proc))
        elif proc.returncode not in (0, 2, 3) or (proc.returncode != 0 and not proc.stderr.strip()):
            c.report.fail(case, f"expected exit 0, 2 or 3 with a message, got {lib.describe_result(proc)}")
        elif proc.returncode == 0 and "4096" not in proc.stdout:
            c.report.fail(case, f"exit 0 but not the expected output: {proc.stdout.strip()[:200]}")
        else:
            outcomes[proc.returncode] = outcomes.get(proc.returncode, 0) + 1
    c.report.ok("memory limits", ", ".join(f"exit {k}: {v}" for k, v in sorted(outcomes.items())))


def main():
    with tempfile.TemporaryDirectory(prefix="sg_bad_") as work:
        c = Cases(work)
        graph = os.path.join(work, "mlp.sgraph")
        multi_graph = os.path.join(work, "broadcasting.sgraph")
        try:
            lib.compile_program(os.path.join(lib.PROGRAMS_DIR, "mlp.py"), graph)
            lib.compile_program(os.path.join(lib.PROGRAMS_DIR, "broadcasting.py"), multi_graph)
        except lib.E2EError as e:
            c.report.fail("compile the test graphs", str(e))
            return c.report.finish()
        inputs = write_inputs(c, mlp_inputs(), "inputs")
        input_cases(c, graph)
        symbolic_cases(c, multi_graph)
        usage_cases(c, graph, inputs, multi_graph)
        output_dir_cases(c)
        memory_limit_cases(c)
        graph_file_cases(c, graph, inputs)
        return c.report.finish()


if __name__ == "__main__":
    sys.exit(main())
