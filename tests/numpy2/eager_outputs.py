"""Eager mode under two NumPy versions: the same programs must give the same dtypes
and shapes, and values within SPEC §1's tolerance (issue: the eager module is
Debian's NumPy 1.24 and NumPy 2.x alike).

    python eager_outputs.py dump OUT.npz      every entry of tests/programs, every binding
    python eager_outputs.py compare A.npz B.npz

Inputs are drawn exactly as the end-to-end tests draw them (e2e_lib), so a dump
depends only on the NumPy version that ran it.
"""
import contextlib
import io
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import e2e_lib as lib  # noqa: E402


def dump(out_path):
    results = {}
    for py_path in lib.list_programs():
        program = os.path.splitext(os.path.basename(py_path))[0]
        options = lib.program_options(py_path)
        with contextlib.redirect_stdout(io.StringIO()):
            module = lib.load_eager_module(py_path)
        for entry in lib.entry_names(py_path):
            fn = getattr(module, entry)
            sig = lib.signature(fn)
            for b, binding in enumerate(lib.bindings(sig, options)):
                key = f"{program}.{entry}.{b}"
                inputs = lib.make_inputs(sig, binding, lib.seed_for(program, entry, b, 0), options)
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        outputs = lib.eager_outputs(fn(**inputs))
                except Exception as e:  # a raise must be the same raise under both versions
                    results[f"{key}:raises"] = np.array(type(e).__name__)
                    continue
                for name, value in outputs.items():
                    results[f"{key}:{name}"] = value
    np.savez(out_path, **results)
    print(f"{len(results)} results from NumPy {np.__version__} in {out_path}")
    return 0


def compare(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    problems = []
    for key in sorted(set(a.files) | set(b.files)):
        if key not in a.files or key not in b.files:
            problems.append(f"{key}: only in {'the first' if key in a.files else 'the second'} dump")
            continue
        x, y = a[key], b[key]
        if x.dtype.kind == "U" or y.dtype.kind == "U":
            if str(x) != str(y):
                problems.append(f"{key}: raises {x} vs {y}")
            continue
        why = lib.compare(key, x, y)
        if why:
            problems.append(why)
    identical = sum(1 for k in a.files if k in b.files and a[k].tobytes() == b[k].tobytes()
                    and a[k].dtype == b[k].dtype)
    print(f"{len(a.files)} results compared: {len(problems)} differ; {identical} are byte-identical")
    for p in problems:
        print("  DIFFERS", p)
    return 1 if problems or not a.files else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        sys.exit(dump(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)
