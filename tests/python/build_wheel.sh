#!/usr/bin/env bash
# make python-wheel: builds the stagegraph wheel (pyproject.toml, scikit-build-core)
# in the build folder `make build` used, so that only the extension's own sources
# are compiled, and installs it into a venv of its own ($BUILD/venv-py) with what
# the Python tests need. The venv is made once (from PyPI: nanobind,
# scikit-build-core, pytest, NumPy); the wheel is rebuilt and reinstalled each time.
# tests/python (ctest python.pytest) then runs on that install.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
venv=$build/venv-py
system_python=/usr/bin/python3
requirements="nanobind==3.1.0 scikit-build-core==1.1.2 pytest==9.2.0 numpy==2.4.6"
stamp=$venv/.requirements

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  rm -rf "$venv"
  "$system_python" -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $requirements
  echo "$requirements" > "$stamp"
fi

start=$(date +%s)
rm -rf "$build/wheel"
# --no-build-isolation: the venv's nanobind and scikit-build-core, at fixed paths,
# so the build folder's configuration (and ccache) see the same files every time.
"$venv/bin/pip" wheel --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-dir="$build" --config-settings=cmake.define.Python_EXECUTABLE="$venv/bin/python" \
  -w "$build/wheel" "$root"
wheel=$(ls "$build"/wheel/stagegraph-*.whl)
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
echo "python-wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB, built and installed in $(( $(date +%s) - start )) s"
