#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds the CUDA backend (SG_WITH_CUDA=ON, its
# own build folder), runs its kernel tests against the reference kernels, the
# Session tests on the GPU, the C API on the GPU, every program of
# tests/programs with graph-run --device cuda against the CPU, and the GPU
# benchmarks of bench/gpu (a few seconds each), then prints two short tables.
# Where PYTHON has nanobind, pytest and its headers, also the Python extension
# with its CUDA module, and tests/python/test_cuda.py on it (device="cuda").
# Sized to finish well inside 8 minutes on one H200 with 16 cores.
#   tools/gpu-check.sh [BUILD_DIR]     (default build-gpu; PYTHON=python3 picks
#   the Python with numpy; on a bare machine see tools/gpu-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || {
  echo "gpu-check: no GPU (nvidia-smi failed)" >&2
  exit 2
}
python=${PYTHON:-/usr/bin/python3}
start=$(date +%s)
py_ext=OFF py_targets=()
if "$python" -c 'import nanobind, pytest, numpy, os, sysconfig
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  py_ext=ON py_targets=(sg_python_modules)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSG_WITH_CUDA=ON -DSG_BUILD_BENCH=ON \
  -DSG_BUILD_PYTHON=$py_ext -DPython_EXECUTABLE="$(command -v "$python")" >/dev/null
cmake --build "$build" -j "$(nproc)" --target sg_cuda_tests sg_runtime_cuda_tests \
  graph-compile graph-run graph-run-cuda sg_gpu_mlp_bench sg_gpu_loop_bench "${py_targets[@]}"
built=$(date +%s)

# count LOG: "passed failed skipped" of a GoogleTest log.
count() {
  echo "$(grep -c '^\[       OK \]' "$1" || true) $(grep -c '^\[  FAILED  \] [A-Za-z]' "$1" || true)" \
       "$(grep -c '^\[  SKIPPED \] [A-Za-z]' "$1" || true)"
}
status=0
t0=$(date +%s)
"$build/tests/sg_cuda_tests" | tee "$build/gpu-kernels.log" || status=1
t1=$(date +%s)
"$build/tests/sg_runtime_cuda_tests" | tee "$build/gpu-session.log" || status=1
t2=$(date +%s)
# The C API links no device library: its CUDA run is not here (sg::cuda_device is C++).
capi="n/a"
# The Python extension on the GPU: the package staged as the wheel lays it out
# (the eager module's files and the installed modules), then test_cuda.py on it.
pycuda="n/a (PYTHON lacks nanobind, pytest or Python.h)"
if [ "$py_ext" = ON ]; then
  stage="$build/py-stage"
  rm -rf "$stage" && cmake --install "$build" --component python --prefix "$stage" >/dev/null
  cp -r compiler/python/stagegraph/. "$stage/stagegraph/"
  py_rc=0
  PYTHONPATH="$stage" timeout 300 "$python" -m pytest -q -p no:cacheprovider -rs tests/python/test_cuda.py \
    | tee "$build/gpu-python.log" || py_rc=$?
  [ "$py_rc" -eq 0 ] || status=1
  pycuda="$(tail -1 "$build/gpu-python.log" | tr -d '=') (exit $py_rc)"
fi
t3=$(date +%s)
programs_status=0
SG_BUILD_DIR="$build" SG_SOURCE_DIR="$PWD" PYTHONPATH="$PWD/compiler/python" \
  timeout 300 "$python" tests/e2e/gpu_programs.py | tee "$build/gpu-programs.log" || programs_status=$?
[ "$programs_status" -eq 0 ] || status=1
t4=$(date +%s)

# GPU benchmarks (bench/gpu/README.md): each prints a last line
# "row: NAME | MEASURED | GOAL | MET"; exit 0 measured, 77 skipped, else failed.
bench_dir="$build/gpu-bench"
rows=()
bench() {  # bench NAME GOAL COMMAND...
  local name=$1 goal=$2 rc=0 row
  shift 2
  timeout 120 "$@" | tee "$bench_dir/last.log" || rc=$?
  row=$(grep '^row: ' "$bench_dir/last.log" | tail -1 | sed 's/^row: //' || true)
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
    rows+=("${row:-$name | no result line (exit $rc) | $goal | no}")
  else
    rows+=("$name | FAILED (exit $rc) | $goal | no")
    status=1
  fi
}
prepare_benchmarks() {  # the weights, and mlp, rnn and loop_overhead compiled with them
  "$python" bench/gpu/prepare.py "$bench_dir" >/dev/null || return 1
  for m in mlp rnn loop_overhead; do
    "$build/tools/graph-compile" "bench/models/$m.py" --weights "$bench_dir/$m/weights.safetensors" \
      -o "$bench_dir/$m.sgraph" || return 1
  done
}
mkdir -p "$bench_dir"
if prepare_benchmarks; then
  bench "MLP b4096 vs cuBLASLt" ">= 90%" \
    "$build/bench/gpu/sg_gpu_mlp_bench" "$bench_dir/mlp.sgraph" "$bench_dir/mlp" --batch 4096
  bench "rnn per iteration beyond kernels" "<= 3 us" \
    "$build/bench/gpu/sg_gpu_loop_bench" rnn "$bench_dir/rnn.sgraph" "$bench_dir/rnn"
  bench "loop_overhead per iteration beyond kernels" "<= 3 us" \
    "$build/bench/gpu/sg_gpu_loop_bench" loop_overhead "$bench_dir/loop_overhead.sgraph"
else
  rows+=("GPU benchmarks | FAILED (preparing their graphs) | - | no")
  status=1
fi
t5=$(date +%s)

read -r kp kf ks <<<"$(count "$build/gpu-kernels.log")"
read -r sp sf ss <<<"$(count "$build/gpu-session.log")"
echo
echo "| check | result |"
echo "|---|---|"
echo "| GPU | $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) |"
echo "| build of the CUDA backend, its tests and the tools | $((built - start)) s |"
echo "| CUDA kernel tests (vs reference kernels) | $kp passed, $kf failed, $ks skipped ($((t1 - t0)) s) |"
echo "| Session on the GPU (vs the CPU Session) | $sp passed, $sf failed, $ss skipped ($((t2 - t1)) s) |"
echo "| C API on the GPU (run, errors, device) | $capi |"
echo "| Python device=\"cuda\" (tests/python/test_cuda.py) | $pycuda ($((t3 - t2)) s) |"
echo "| tests/programs with --device cuda (vs --device cpu) | $(tail -1 "$build/gpu-programs.log" | sed 's/^gpu programs: //') ($((t4 - t3)) s, exit $programs_status) |"
echo
echo "GPU benchmarks ($((t5 - t4)) s):"
echo
echo "| benchmark | measured | goal | met |"
echo "|---|---|---|---|"
for row in "${rows[@]}"; do echo "| $row |"; done
exit $status
