#!/usr/bin/env bash
# make test-serve: a venv of its own ($BUILD/venv-serve) with Ray Serve from PyPI and
# the stagegraph wheel `make python-wheel` built ($BUILD/wheel). The venv is made once
# (Ray is ~100 MB); the wheel is reinstalled each time, so the test runs this build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
venv=$build/venv-serve
system_python=/usr/bin/python3
requirements="ray[serve]==2.60.0 numpy==2.4.6"
stamp=$venv/.requirements

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  rm -rf "$venv"
  "$system_python" -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $requirements
  echo "$requirements" > "$stamp"
fi
wheel=$(ls "$build"/wheel/stagegraph-*.whl)
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
