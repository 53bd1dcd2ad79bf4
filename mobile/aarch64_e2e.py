"""End to end on aarch64: tests/e2e/test_programs.py with graph-run cross-built for
aarch64-linux-gnu and run under qemu-aarch64, everything else on the host.

Each program of tests/programs is compiled by the host's graph-compile (the graph
file is the same on every CPU), its inputs drawn and its eager-mode outputs computed
by CPython + NumPy on the host, and graph-run of the aarch64 build runs it under
qemu-user; the outputs are compared with eager mode's as the host's test does.
Then tests/e2e/test_quantize.py the same way (int8/int4/bf16/f16 weights: on a CPU
with the dot-product extension, as qemu's default one, the int8 and int4 dense
layers run the NEON dot kernel).

    SG_BUILD_DIR=build SG_AARCH64_BUILD_DIR=build-aarch64 \
      python3 mobile/aarch64_e2e.py             # make test-aarch64
    SG_E2E_PROGRAMS=mlp,loops_gcd ...           # only those (make aarch64-smoke)

SG_QEMU (default qemu-aarch64) and SG_AARCH64_LIBS (the folder of the arm64 shared
libraries of XNNPACK, pthreadpool and cpuinfo, default
$SG_AARCH64_BUILD_DIR/sysroot/usr/lib/aarch64-linux-gnu) say how to run it.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))

import e2e_lib as lib  # noqa: E402
import test_programs  # noqa: E402
import test_quantize  # noqa: E402

# qemu runs a few hundred times slower than the host: a run gets that much longer.
QEMU_TIMEOUT_S = 600


def main():
    cross = os.environ.get("SG_AARCH64_BUILD_DIR")
    if not cross:
        print("aarch64_e2e: set SG_AARCH64_BUILD_DIR to the aarch64 build folder", file=sys.stderr)
        return 1
    cross = os.path.abspath(cross)
    graph_run = os.path.join(cross, "tools", "graph-run")
    if not os.access(graph_run, os.X_OK):
        print(f"aarch64_e2e: {graph_run} is missing: build it (make build-aarch64)", file=sys.stderr)
        return 1
    libs = os.environ.get("SG_AARCH64_LIBS") or os.path.join(cross, "sysroot", "usr", "lib", "aarch64-linux-gnu")
    # The arm64 C library of the multiarch install comes first (DEPENDENCIES.md: two
    # arm64 C libraries mixed under qemu hang at the first thread start).
    ld_path = ":".join(p for p in ("/usr/lib/aarch64-linux-gnu", libs) if os.path.isdir(p))
    qemu = os.environ.get("SG_QEMU", "qemu-aarch64")
    host_run_tool = lib.run_tool

    def run_tool(name, args, timeout=lib.TOOL_TIMEOUT_S, address_space=None):
        if name != "graph-run":
            return host_run_tool(name, args, timeout, address_space)
        cmd = [qemu, "-E", f"LD_LIBRARY_PATH={ld_path}", graph_run] + [str(a) for a in args]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=QEMU_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            return subprocess.CompletedProcess(cmd, None, out, f"timed out after {QEMU_TIMEOUT_S} s under qemu")

    lib.run_tool = run_tool
    print(f"graph-run: {graph_run} under {qemu}; graph-compile and eager mode on the host")
    rc = test_programs.main()
    return test_quantize.main() or rc


if __name__ == "__main__":
    sys.exit(main())
