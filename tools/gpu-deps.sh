#!/usr/bin/env bash
# For tools/gpu-check.sh on a lent GPU machine that has CUDA, a compiler, CMake and
# Ninja but not our Debian packages, and no network: run this here (Debian 12,
# amd64) to fetch them into .gpu-debs/ (git-ignored, ~20 MB), carry .gpu-debs to
# the machine, and there unpack them into a prefix, not into /:
#   for d in .gpu-debs/*.deb; do dpkg -x $d /opt/deps; done
#   for w in .gpu-debs/*.whl; do python3 -m zipfile -e $w /opt/py; done
#   P=/opt/deps/usr; export CMAKE_PREFIX_PATH=$P LD_LIBRARY_PATH=$P/lib/x86_64-linux-gnu \
#     CPATH=$P/include LIBRARY_PATH=$P/lib/x86_64-linux-gnu PATH=$P/bin:$PATH PYTHONPATH=/opt/py
#   PYTHON=python3 tools/gpu-check.sh
# The numpy wheel is for the machine's Python (PY, default 3.12: an Ubuntu 24.04 image).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PY:-3.12}
mkdir -p .gpu-debs
grep -qx '/.gpu-debs/' .git/info/exclude 2>/dev/null || echo '/.gpu-debs/' >> .git/info/exclude
cd .gpu-debs
apt-get download -q libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo-dev libcpuinfo0 \
  libflatbuffers-dev libflatbuffers2 flatbuffers-compiler flatbuffers-compiler-dev libmimalloc-dev libmimalloc2.0 \
  libgtest-dev libbenchmark-dev libbenchmark1debian nlohmann-json3-dev libxxhash-dev
python3 -m pip download -q numpy==1.26.4 --python-version "$py" --only-binary=:all: \
  --platform manylinux2014_x86_64 -d .
# For the Python step of gpu-check.sh (it also needs the machine's Python headers):
python3 -m pip download -q nanobind==3.1.0 pytest==9.2.0 --python-version "$py" --only-binary=:all: -d .
ls
