#!/usr/bin/env bash
# The data segment's checksum at memory speed? Compiles a program whose one weight
# is 256 MiB of f32 (bench/peers/load_scaling.py's program), then runs
# sg_checksum_probe on it: memset/memcpy/read of 256 MiB (the ceiling), XXH3 over
# 256 MiB, and Program::load_file with and without the check. Files go under
# bench/out/checksum/.
#
#   bench/load/checksum.sh [BUILD_DIR] [-- PROBE ARGS...]
#
# Needs graph-compile and sg_checksum_probe in BUILD_DIR (default build):
#   cmake --build build --target graph-compile sg_checksum_probe
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
[[ $# -gt 0 ]] && shift
[[ ${1:-} == -- ]] && shift
case $build in /*) ;; *) build=$repo/$build ;; esac
out=$repo/bench/out/checksum
mkdir -p "$out"
cat > "$out/first.py" <<'PY'
"""bench/load/checksum.sh's program: 4 floats of one large weight."""
import stagegraph as sg


@sg.function
def first(x: sg.f32[4], i: sg.i64) -> sg.f32[4]:
    return sg.weight("w")[i:i + 4] + x
PY
if [[ ! -f $out/w256mib.safetensors ]]; then
  PYTHONPATH=$repo/compiler/python /usr/bin/python3 - "$out/w256mib.safetensors" <<'PY'
import sys

import numpy as np
import stagegraph as sg

w = np.random.default_rng(0).random((256 << 20) // 4, dtype=np.float32)
sg.write_safetensors(sys.argv[1], {"w": w})
PY
fi
(cd "$out" && "$build/tools/graph-compile" first.py -o w256mib.sgraph --weights w256mib.safetensors)
"$build/bench/sg_checksum_probe" "$out/w256mib.sgraph" "$@"
