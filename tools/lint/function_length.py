#!/usr/bin/env python3
"""No function in compiler/, runtime/ or kernels/ runs past 120 lines (issue: staging code
that fits on a screen). A definition is a line at column 0 with a parameter list whose
body opens with `{` at a line's end and closes with `}` at column 0 (the project's
format). ALLOWED lists the functions still waiting to be split, at their length now:
one may shrink, never grow, and a new function over the limit fails the check.

    tools/lint/function_length.py [ROOT]      exit 1 naming each function over the limit
"""
import os
import sys

LIMIT = 120
DIRS = ("compiler", "runtime", "kernels")
SKIP = (" ", "\t", "#", "//", "/*", "*", "namespace", "struct ", "class ", "enum ", "union ", "extern ",
        "using ", "static_assert", "}")
# path:function -> its length when it was listed
ALLOWED = {}


def functions(path):
    """(name, length in lines, first line) of each definition in a C++ file."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        ln = lines[i]
        if ln and not ln.startswith(SKIP) and "(" in ln and not ln.rstrip().endswith((";", "}")):
            j = i
            while j < len(lines) and j < i + 8 and not lines[j].rstrip().endswith("{"):
                if lines[j].rstrip().endswith((";", "}")):
                    break
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and not (lines[k] == "}" or lines[k].startswith("};")):
                    k += 1
                name = ln.split("(")[0].split()[-1] if ln.split("(")[0].split() else ln
                out.append((name, k - i + 1, i + 1))
                i = k + 1
                continue
        i += 1
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    failures = []
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, root)
                for name, n, line in functions(path):
                    allowed = ALLOWED.get(f"{rel}:{name}", LIMIT)
                    if n > allowed:
                        failures.append(f"{rel}:{line}: {name} runs {n} lines (limit {allowed})")
    for f in failures:
        print(f)
    print(f"function length: {len(failures)} over the limit of {LIMIT} lines "
          f"({len(ALLOWED)} listed still to split)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
