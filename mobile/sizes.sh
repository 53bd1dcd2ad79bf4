#!/usr/bin/env bash
# Writes mobile/SIZES.md: the stripped sizes of the runtime's builds for x86-64 and
# aarch64, and callgrind's instruction counts for loading and first running the
# examples. Run by `make sizes` (which installs what it needs); takes a while: it
# configures and builds three size-optimized builds per CPU.
#
#   size-all      every op, XNNPACK: sg-size-probe ("everything"), the core probes,
#                 the JNI library
#   size-mlp-xnn  -DSG_SELECTED_OPS=<examples/mlp.py's ops>, XNNPACK
#   size-mlp-ref  the same ops, -DSG_WITH_XNNPACK=OFF (our kernels only)
#
# Every size build: -Os, LTO, -ffunction-sections -fdata-sections, --gc-sections,
# hidden visibility, no RTTI, no exceptions nor unwind tables (nothing in the
# runtime throws; team.cc starts its threads with pthread_create there), no
# mimalloc, no compiler, tools or tests: only the probe targets are built. The
# sizes are of the files as shipped after `strip`; the C and C++ libraries (glibc,
# libstdc++) are shared and not counted, nor are XNNPACK's shared libraries, which
# are given apart. mobile/size/NOTES.md (the breakdown and what remains) is
# copied into SIZES.md after the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
BUILD_AARCH64=${BUILD_AARCH64:-build-aarch64}
JOBS=${JOBS:-$(nproc)}
OUT=${SG_SIZES_DIR:-$ROOT/build-sizes}
PYTHON=/usr/bin/python3
mkdir -p "$OUT/graphs"

# ---- graphs and the ops list of the mlp example -------------------------------------
cmake --build "$BUILD" -j "$JOBS" --target graph-compile graph-inspect >/dev/null
EXAMPLES="mlp cnn rnn greedy_decode tree_rnn"
for ex in $EXAMPLES; do
  "$BUILD/tools/graph-compile" "examples/$ex.py" -o "$OUT/graphs/$ex.sgraph"
done
"$BUILD/tools/graph-inspect" --ops "$OUT/graphs/mlp.sgraph" > "$OUT/mlp.ops"
echo "== the ops of examples/mlp.py:"; cat "$OUT/mlp.ops"

# Nothing in the runtime throws or catches (team.cc starts its helpers with
# pthread_create when built without exceptions), so the size builds have no
# exceptions, RTTI or unwind tables.
SIZE_CXX="-ffunction-sections -fdata-sections -fvisibility=hidden -fvisibility-inlines-hidden -fno-rtti -fno-exceptions -fno-asynchronous-unwind-tables -fno-unwind-tables"
SIZE_C="-ffunction-sections -fdata-sections -fvisibility=hidden -fno-asynchronous-unwind-tables -fno-unwind-tables"
SIZE_LD="-Wl,--gc-sections -Wl,-O1 -Wl,--as-needed"

# configure DIR LINK_FLAGS CMAKE_ARGS...
configure() {
  local dir=$1 ld=$2; shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=MinSizeRel -DSG_WERROR=ON \
      -DCMAKE_CXX_FLAGS="$SIZE_CXX" -DCMAKE_C_FLAGS="$SIZE_C" -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON \
      -DCMAKE_EXE_LINKER_FLAGS="$ld" -DCMAKE_SHARED_LINKER_FLAGS="$ld" \
      -DSG_WITH_MIMALLOC=OFF -DSG_WITH_CUDA=OFF -DSG_BUILD_TESTS=OFF -DSG_BUILD_BENCH=OFF \
      -DSG_BUILD_COMPILER_AND_TOOLS=OFF -DSG_INSTALL=OFF "$@" >/dev/null
  fi
}

# stripped_size FILE STRIP: bytes of FILE after strip.
stripped_size() {
  local tmp; tmp=$(mktemp)
  "$2" -o "$tmp" "$1"
  stat -c %s "$tmp"
  rm -f "$tmp"
}

kb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }

declare -A SIZE
declare -A LOADED
# measure KEY FILE STRIP SIZE: SIZE[KEY] (the stripped file) and LOADED[KEY] (its
# code and data, `size`: text + data + bss, without the file's page padding).
measure() {
  [ -f "$2" ] || return 0
  SIZE[$1]=$(stripped_size "$2" "$3")
  LOADED[$1]=$("$4" "$2" | awk 'NR == 2 { print $1 + $2 }')
}

# measure_arch ARCH STRIP SIZE LIBDIR LINK_FLAGS CMAKE_ARGS...
measure_arch() {
  local arch=$1 strip=$2 sizetool=$3 libdir=$4 ld=$5; shift 5
  local base="$OUT/$arch"
  configure "$base-all" "$ld" "$@"
  configure "$base-mlp-xnn" "$ld" "$@" -DSG_SELECTED_OPS="$OUT/mlp.ops"
  configure "$base-mlp-ref" "$ld" "$@" -DSG_SELECTED_OPS="$OUT/mlp.ops" -DSG_WITH_XNNPACK=OFF
  local all_targets="sg-size-probe sg-core-probe"
  if grep -q "stagegraph_jni" "$base-all/build.ninja"; then all_targets="$all_targets stagegraph_jni"; fi
  if grep -q "sg-core-capi-probe" "$base-all/build.ninja"; then all_targets="$all_targets sg-core-capi-probe"; fi
  echo "== $arch: building $base-{mlp-ref,mlp-xnn,all} ($(date -u +%H:%M:%S))"
  cmake --build "$base-mlp-ref" -j "$JOBS" --target sg-size-probe
  cmake --build "$base-mlp-xnn" -j "$JOBS" --target sg-size-probe
  cmake --build "$base-all" -j "$JOBS" --target $all_targets
  measure "$arch.core" "$base-all/mobile/sg-core-probe" "$strip" "$sizetool"
  measure "$arch.capi" "$base-all/mobile/sg-core-capi-probe" "$strip" "$sizetool"
  measure "$arch.mlp_ref" "$base-mlp-ref/mobile/sg-size-probe" "$strip" "$sizetool"
  measure "$arch.mlp_xnn" "$base-mlp-xnn/mobile/sg-size-probe" "$strip" "$sizetool"
  measure "$arch.all" "$base-all/mobile/sg-size-probe" "$strip" "$sizetool"
  measure "$arch.jni" "$base-all/mobile/libstagegraph_jni.so" "$strip" "$sizetool"
  local xnn=0 f
  for f in libXNNPACK.so.0 libpthreadpool.so.0 libcpuinfo.so.0; do
    xnn=$((xnn + $(stripped_size "$libdir/$f" "$strip")))
  done
  SIZE[$arch.xnnlibs]=$xnn
  echo "== $arch: done ($(date -u +%H:%M:%S))"
}

measure_arch x86-64 strip size /usr/lib/x86_64-linux-gnu "$SIZE_LD"
if [ "${SG_SIZES_SKIP_AARCH64:-0}" != 1 ]; then
  # GNU ld pads arm64 files to 64 KB pages by default; Linux on arm64 mostly runs
  # 4 KB pages. The toolchain file's -rpath-link is repeated (the flags replace it).
  A64_LIBS="$ROOT/$BUILD_AARCH64/sysroot/usr/lib/aarch64-linux-gnu"
  measure_arch aarch64 aarch64-linux-gnu-strip aarch64-linux-gnu-size "$A64_LIBS" \
    "$SIZE_LD -Wl,-z,max-page-size=4096 -Wl,-rpath-link,$A64_LIBS" \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
    -DSG_AARCH64_SYSROOT="$ROOT/$BUILD_AARCH64/sysroot"
fi

# ---- callgrind: instructions for load + first run (x86-64, everything build) -------
# tree_rnn is left out: on zeros its child indices all point at the root, so the
# run recurses to the depth limit and fails; that is no load + first run.
CALLGRIND_EXAMPLES="mlp cnn rnn greedy_decode"
declare -A IR
for ex in $CALLGRIND_EXAMPLES; do
  log=$(mktemp)
  if valgrind --tool=callgrind --callgrind-out-file=/dev/null \
       "$OUT/x86-64-all/mobile/sg-size-probe" "$OUT/graphs/$ex.sgraph" >/dev/null 2>"$log"; then
    IR[$ex]=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log")
  else
    IR[$ex]="failed: $(tail -n 1 "$log")"
  fi
  rm -f "$log"
done

# ---- SIZES.md --------------------------------------------------------------------------
cell() {
  local v=${SIZE[$1]:-} l=${LOADED[$1]:-}
  if [ -z "$v" ]; then echo "n/a"; return; fi
  if [ -n "$l" ]; then echo "$(kb "$v") KB ($v B; code+data $(kb "$l") KB)"; else echo "$(kb "$v") KB ($v B)"; fi
}
verdict() {  # verdict KEY BUDGET_BYTES
  local v=${SIZE[$1]:-}
  if [ -z "$v" ]; then echo "not measured"; elif [ "$v" -le "$2" ]; then echo "met"; else echo "NOT met"; fi
}
{
  echo "# Sizes"
  echo
  echo "Written by \`mobile/sizes.sh\` (\`make sizes\`) at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!mobile/SIZES.md' || echo ' + local changes'), $(date -u +%Y-%m-%d)."
  echo "Stripped sizes of what ships (and, in each cell, the code and data in it: \`size\`'s"
  echo "text + data, without the file's headers and page padding). Size builds: GCC 12,"
  echo "\`-Os\`, LTO, \`-ffunction-sections -fdata-sections\`, \`--gc-sections\`, hidden"
  echo "visibility, \`-fno-rtti -fno-exceptions -fno-asynchronous-unwind-tables -fno-unwind-tables\`,"
  echo "no mimalloc; arm64 files linked with 4 KB pages (\`-z max-page-size=4096\`);"
  echo "glibc and libstdc++ are the system's shared libraries and not counted. Each program"
  echo "is \`sg-size-probe\` (mobile/size/size_probe.cc: load a graph file, create a Session,"
  echo "bind zeros, run once, print the output shapes) linked against that build's runtime."
  echo
  echo "| build | x86-64 | aarch64 |"
  echo "|---|---|---|"
  echo "| core: loader, verifier, planner, executor, no kernels (\`sg-core-probe\`) | $(cell x86-64.core) | $(cell aarch64.core) |"
  echo "| core + C API (\`sg-core-capi-probe\`, a C program over \`c_api.h\`) | $(cell x86-64.capi) | $(cell aarch64.capi) |"
  echo "| selective build for examples/mlp.py, our kernels only (\`-DSG_WITH_XNNPACK=OFF\`) | $(cell x86-64.mlp_ref) | $(cell aarch64.mlp_ref) |"
  echo "| selective build for examples/mlp.py, with XNNPACK (our part) | $(cell x86-64.mlp_xnn) | $(cell aarch64.mlp_xnn) |"
  echo "| everything: every op, XNNPACK (our part) | $(cell x86-64.all) | $(cell aarch64.all) |"
  echo "| JNI library \`libstagegraph_jni.so\` (everything + C API + JNI) | $(cell x86-64.jni) | $(cell aarch64.jni) |"
  echo "| + Debian's XNNPACK, pthreadpool, cpuinfo shared libraries (whole) | $(cell x86-64.xnnlibs) | $(cell aarch64.xnnlibs) |"
  echo
  echo "Goals (issue 27):"
  echo
  echo "- core ≤ 100 KB on aarch64: $(verdict aarch64.core 102400)."
  echo "- selective mlp build without XNNPACK ≤ 250 KB (aarch64): $(verdict aarch64.mlp_ref 256000)."
  echo
  echo "The ops of examples/mlp.py (\`graph-inspect --ops\`), the list both mlp builds are made from:"
  echo
  echo '```'
  grep -v '^#' "$OUT/mlp.ops"
  echo '```'
  echo
  if [ -f mobile/size/NOTES.md ]; then cat mobile/size/NOTES.md; echo; fi
  echo "## Instructions for load + first run (callgrind, x86-64)"
  echo
  echo "\`valgrind --tool=callgrind sg-size-probe GRAPH\` of the x86-64 \"everything\" build: the"
  echo "whole process (dynamic linking, XNNPACK's initialization, loading and verifying the"
  echo "graph, creating the Session and packing weights, one run on zeros with symbolic dims"
  echo "1). Instruction counts are stable from run to run, so a regression shows here;"
  echo "times and peak memory under qemu would not mean anything."
  echo
  echo "| example | instructions (Ir) |"
  echo "|---|---|"
  for ex in $CALLGRIND_EXAMPLES; do echo "| examples/$ex.py | ${IR[$ex]} |"; done
  echo
  echo "(examples/tree_rnn.py is not counted: on the probe's zero inputs every child index"
  echo "is the root, so its run recurses to the depth limit and fails.)"
} > mobile/SIZES.md
echo "== wrote mobile/SIZES.md"
cat mobile/SIZES.md
