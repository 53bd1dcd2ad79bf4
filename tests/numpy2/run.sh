#!/usr/bin/env bash
# make test-numpy2: the eager module on NumPy 2.x beside Debian's NumPy 1.24.
# Installs NumPy 2.x from PyPI into build/venv-numpy2 (once), runs the eager-module
# tests under it, and checks that every test program gives the same results under
# both versions. Without PyPI the run says so and stops (exit 0): the NumPy 1.24 half
# is in `make test` already.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${SG_NUMPY2_VENV:-$root/build/venv-numpy2}
system_python=/usr/bin/python3

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import numpy, sys; sys.exit(int(numpy.__version__.split(".")[0]) < 2)' 2>/dev/null; then
  rm -rf "$venv"
  "$system_python" -m venv "$venv"
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check 'numpy>=2,<3'; then
    echo "test-numpy2: SKIPPED — NumPy 2.x could not be installed from PyPI" >&2
    rm -rf "$venv"
    exit 0
  fi
fi

echo "== eager-module tests on NumPy $("$venv/bin/python" -c 'import numpy; print(numpy.__version__)')"
"$venv/bin/python" "$root/tests/e2e/test_eager_module.py"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== every test program, eager, NumPy 1.24 against NumPy 2.x"
"$system_python" "$root/tests/numpy2/eager_outputs.py" dump "$tmp/numpy1.npz"
"$venv/bin/python" "$root/tests/numpy2/eager_outputs.py" dump "$tmp/numpy2.npz"
"$system_python" "$root/tests/numpy2/eager_outputs.py" compare "$tmp/numpy1.npz" "$tmp/numpy2.npz"
