#!/usr/bin/env python3
"""The layering of DESIGN.md, checked on every #include "...":

- kernels/ includes only kernels/ and the vocabulary headers (stagegraph/status.h,
  dtype.h): never the runtime's internals, its other public headers, or the compiler;
- the compiler includes kernels/ops and kernels/reference (shape rules, folding) and the
  vocabulary headers: never a backend (xnnpack/, cuda/), the runtime, or the runtime's
  other public headers;
- runtime/src includes of kernels/ only the interfaces (ops/, reference/kernel.h,
  xnnpack/xnnpack_backend.h, cuda/cuda_backend.h): never a kernel's internals;
  and never the compiler.

ALLOWED lists the crossings still to be undone (file -> header); a new one fails.

    tools/lint/layering.py [ROOT]     exit 1 naming each crossing
"""
import os
import re
import sys

VOCABULARY = {"stagegraph/status.h", "stagegraph/dtype.h"}
COMPILER_DIRS = ("frontend/", "staging/", "ir/", "passes/", "emit/")
KERNEL_INTERFACES = {"reference/kernel.h", "xnnpack/xnnpack_backend.h", "cuda/cuda_backend.h"}
ALLOWED = {
    ("runtime/src/executor_registers.cc", "reference/binary_ops.h"),
    ("runtime/src/verifier.cc", "reference/selection.h"),
}


def violation(rel, header):
    """Why including `header` from file `rel` crosses a layer, or None."""
    if rel.startswith("kernels/"):
        if header.startswith("stagegraph/") and header not in VOCABULARY:
            return "kernels include only the vocabulary headers of the runtime"
        if header.startswith(COMPILER_DIRS) or header.endswith(("executor.h", "program_impl.h", "session.h")):
            return "kernels never include the runtime's internals or the compiler"
    elif rel.startswith("compiler/"):
        if header.startswith(("xnnpack/", "cuda/")):
            return "the compiler never includes a kernel backend"
        if header.startswith("stagegraph/") and header not in VOCABULARY:
            return "the compiler includes only the vocabulary headers of the runtime"
    elif rel.startswith("runtime/"):
        if header.startswith(COMPILER_DIRS):
            return "the runtime never includes the compiler"
        if header.startswith(("reference/", "xnnpack/", "cuda/")) and header not in KERNEL_INTERFACES:
            return "the runtime includes a kernel backend through its interface only"
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    failures, checked = [], 0
    for d in ("kernels", "compiler", "runtime"):
        for base, _, files in os.walk(os.path.join(root, d)):
            if "/python" in base:
                continue
            for f in sorted(files):
                if not f.endswith((".cc", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, root)
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    checked += 1
                    why = violation(rel, m.group(1))
                    if why and (rel, m.group(1)) not in ALLOWED:
                        failures.append(f"{rel}:{n}: includes \"{m.group(1)}\": {why}")
    for f in failures:
        print(f)
    print(f"layering: {checked} includes checked, {len(failures)} crossing a layer "
          f"({len(ALLOWED)} listed still to undo)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
