"""Compares the .npy results of graph-run with eager mode's, by SPEC.md §1's rule.

    python3 tools/compare_npy.py GOT_DIR EXPECTED_DIR

float: max |got - expected| <= 1e-4 * max |expected| (or <= 1e-6 where that is 0);
ints and bools: exactly. Exits 1 on any mismatch or missing file.
"""
import os
import sys

import numpy as np


def compare(got_dir, want_dir):
    ok = True
    names = sorted(f for f in os.listdir(want_dir) if f.endswith(".npy"))
    for name in names:
        want = np.load(os.path.join(want_dir, name))
        path = os.path.join(got_dir, name)
        if not os.path.exists(path):
            print(f"{name[:-4]}: missing from {got_dir}")
            ok = False
            continue
        got = np.load(path)
        if got.dtype != want.dtype or got.shape != want.shape:
            print(f"{name[:-4]}: got {got.dtype}{list(got.shape)}, eager gives {want.dtype}{list(want.shape)}")
            ok = False
            continue
        if want.dtype.kind == "f":
            scale = float(np.max(np.abs(want.astype(np.float64)))) if want.size else 0.0
            err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0.0
            tol = 1e-4 * scale if scale > 0 else 1e-6
            same = err <= tol or (np.array_equal(np.isnan(got), np.isnan(want)) and
                                  np.allclose(got, want, rtol=0, atol=tol, equal_nan=True))
            print(f"{name[:-4]}: {want.dtype}{list(want.shape)} max abs error {err:.3g} "
                  f"(tolerance {tol:.3g}) {'ok' if same else 'MISMATCH'}")
        else:
            same = np.array_equal(got, want)
            print(f"{name[:-4]}: {want.dtype}{list(want.shape)} {'equal' if same else 'MISMATCH'}")
        ok = ok and same
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(0 if compare(sys.argv[1], sys.argv[2]) else 1)
