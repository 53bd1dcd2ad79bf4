#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds the CUDA backend (SG_WITH_CUDA=ON, its
# own build folder) and runs its tests against the reference kernels, then prints
# a short table. Sized to finish well inside 8 minutes on one H200 with 16 cores.
#   tools/gpu-check.sh [BUILD_DIR]     (default build-gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || {
  echo "gpu-check: no GPU (nvidia-smi failed)" >&2
  exit 2
}
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSG_WITH_CUDA=ON -DSG_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target sg_cuda_tests
built=$(date +%s)
"$build/tests/sg_cuda_tests" --gtest_brief=0 | tee "$build/gpu-tests.log"
done_at=$(date +%s)
passed=$(grep -c '^\[       OK \]' "$build/gpu-tests.log" || true)
failed=$(grep -c '^\[  FAILED  \]' "$build/gpu-tests.log" || true)
skipped=$(grep -c '^\[  SKIPPED \]' "$build/gpu-tests.log" || true)
echo
echo "| check | result |"
echo "|---|---|"
echo "| GPU | $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) |"
echo "| build of the CUDA backend and its tests | $((built - start)) s |"
echo "| CUDA kernel tests (vs reference kernels) | $passed passed, $failed failed, $skipped skipped ($((done_at - built)) s) |"
[ "$failed" -eq 0 ]
