#!/bin/sh
# Bit identity of sg.random across implementations: the reference kernel's
# transforms built natively, for x86-64 with FMA (-march=haswell) and for aarch64
# (cross-compiled, run under qemu-aarch64 where installed), each with the flag the
# build uses (-ffp-contract=off), against eager mode (NumPy). Also shows that
# without the flag a compiler that fuses multiply-adds gives other bits.
# Usage: tests/random_bits/check.sh   (from the repository root; not run by make test)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH="$root/compiler/python" /usr/bin/python3 - "$tmp/eager.txt" <<'PY'
import sys
import numpy as np
from stagegraph import random as R
lines = []
for k0, k1 in [(0, 42), (0xffffffff, 7), (123456, 987654321)]:
    idx = np.arange(20000, dtype=np.uint64)
    w0, w1 = R.threefry2x32(k0, k1, (idx >> np.uint64(32)).astype(np.uint32), (idx & np.uint64(0xffffffff)).astype(np.uint32))
    b = w0 ^ w1
    cols = (w0, w1, b, R._uniform01(b).view(np.uint32), R._normal_from_bits(b).view(np.uint32),
            R._gumbel_from_bits(b).view(np.uint32))
    lines += [" ".join("%08x" % int(v) for v in row) for row in zip(*cols)]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
src="$root/tests/random_bits/dump.cc $root/kernels/reference/random.cc"
inc="-I$root/kernels -I$root/core/include"
build_run() {  # name runner compiler flags...
  name=$1; runner=$2; shift 2
  if ! command -v "$1" >/dev/null 2>&1; then echo "skip  $name ($1 not installed)"; return; fi
  "$@" -std=c++20 -O2 $inc $src -o "$tmp/$name" || { echo "FAIL  $name: build"; return; }
  if [ -n "$runner" ] && ! command -v "$runner" >/dev/null 2>&1; then echo "skip  $name ($runner not installed)"; return; fi
  $runner "$tmp/$name" > "$tmp/$name.txt"
  if cmp -s "$tmp/$name.txt" "$tmp/eager.txt"; then echo "same  $name"; else
    echo "DIFF  $name: $(diff "$tmp/$name.txt" "$tmp/eager.txt" | grep -c '^<') of 60000 lines"; fi
}
build_run native "" g++ -ffp-contract=off
build_run haswell "" g++ -march=haswell -ffp-contract=off
build_run clang "" clang++ -ffp-contract=off
build_run aarch64 qemu-aarch64 aarch64-linux-gnu-g++ -static -ffp-contract=off
echo "without -ffp-contract=off (expected to differ where multiply-adds fuse):"
build_run haswell-fused "" g++ -march=haswell -ffp-contract=fast
build_run aarch64-default qemu-aarch64 aarch64-linux-gnu-g++ -static
