#!/usr/bin/env python3
"""The layering of DESIGN.md ("Layout"), checked on every #include "...":

- core/ (Status, Result, DType, Span: core/include/stagegraph/) includes only
  itself;
- kernels/ includes only kernels/ and the core: never the runtime's public
  headers (stagegraph/ other than the core's), its internals, or the compiler;
  within kernels/, the op table (ops/), the kernel interface (interface/) and the
  selection (selection/) include no kernel library, and each folder includes only
  the folders KERNEL_FOLDERS gives it (the reference kernels no backend, our SIMD
  kernels (simd/) neither XNNPACK's backend nor CUDA's, the CUDA kernels no CPU
  backend); the op table's routing files (infer.cc, check_attrs.cc) read the
  selection (selection/selected_ops.h);
- the compiler includes of kernels/ the op table (ops/) and the kernel interface
  (interface/: reference_kernel() for constant folding) only, and of stagegraph/
  the core only: never a kernel library, the runtime, or the runtime's other
  public headers;
- runtime/ includes of kernels/ only the interfaces: ops/, interface/,
  xnnpack/xnnpack_backend.h, cuda/cuda_backend.h; never a kernel's internals, and
  never the compiler; its public headers (runtime/include/) only stagegraph/.

No crossing is allowed: a new one fails, naming the file, the line and the rule.

    tools/lint/layering.py [ROOT]     exit 1 naming each crossing
"""
import os
import re
import sys

COMPILER_DIRS = ("frontend/", "staging/", "ir/", "passes/", "emit/")
KERNEL_LIBRARIES = ("reference/", "simd/", "xnnpack/", "cuda/")
KERNEL_DIRS = ("ops/", "interface/", "selection/") + KERNEL_LIBRARIES
RUNTIME_INTERNALS = ("executor.h", "program_impl.h", "session.h")
KERNEL_INTERFACES = {"xnnpack/xnnpack_backend.h", "cuda/cuda_backend.h"}
# kernels/ by folder (DESIGN.md's second table): the folders of kernels/ each may
# include, besides the core. The op table's routing files read the selection.
KERNEL_FOLDERS = {
    "ops/": ("ops/",),
    "interface/": ("ops/", "interface/"),
    "selection/": ("ops/", "interface/", "selection/"),
    "reference/": ("ops/", "interface/", "selection/", "reference/"),
    "simd/": ("ops/", "interface/", "reference/", "simd/"),
    "xnnpack/": ("ops/", "interface/", "selection/", "reference/", "simd/", "xnnpack/"),
    "cuda/": ("ops/", "interface/", "reference/", "cuda/"),
}
KERNEL_EXCEPTIONS = {("kernels/ops/infer.cc", "selection/selected_ops.h"),
                     ("kernels/ops/check_attrs.cc", "selection/selected_ops.h")}


def core_headers(root):
    d = os.path.join(root, "core", "include", "stagegraph")
    return {"stagegraph/" + f for f in os.listdir(d)} if os.path.isdir(d) else set()


def violation(rel, header, core):
    """Why including `header` from file `rel` crosses a layer, or None."""
    if rel.startswith("core/"):
        if header not in core:
            return "the core includes only itself"
    elif rel.startswith("kernels/"):
        if header.startswith("stagegraph/") and header not in core:
            return "kernels include the core, never the runtime's public headers"
        if header.startswith(COMPILER_DIRS) or header.endswith(RUNTIME_INTERNALS):
            return "kernels never include the runtime's internals or the compiler"
        folder = rel[len("kernels/"):].split("/")[0] + "/"
        if (header.startswith(KERNEL_DIRS) and folder in KERNEL_FOLDERS and
                not header.startswith(KERNEL_FOLDERS[folder]) and (rel, header) not in KERNEL_EXCEPTIONS):
            return f"kernels/{folder} includes of kernels/ only {', '.join(KERNEL_FOLDERS[folder])}"
    elif rel.startswith("compiler/"):
        if header.startswith(KERNEL_LIBRARIES + ("selection/",)):
            return "the compiler includes of kernels/ the op table and the kernel interface only"
        if header.startswith("stagegraph/") and header not in core:
            return "the compiler includes the core, never the runtime's public headers"
    elif rel.startswith("runtime/include/"):
        if not header.startswith("stagegraph/"):
            return "the runtime's public headers include only stagegraph/"
    elif rel.startswith("runtime/"):
        if header.startswith(COMPILER_DIRS):
            return "the runtime never includes the compiler"
        if header.startswith(KERNEL_LIBRARIES + ("selection/",)) and header not in KERNEL_INTERFACES:
            return "the runtime includes kernels through their interfaces only"
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    core = core_headers(root)
    if not core:
        print("layering: no core headers in core/include/stagegraph")
        return 1
    failures, checked = [], 0
    for d in ("core", "kernels", "compiler", "runtime"):
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
                    why = violation(rel, m.group(1), core)
                    if why:
                        failures.append(f"{rel}:{n}: includes \"{m.group(1)}\": {why}")
    for f in failures:
        print(f)
    print(f"layering: {checked} includes checked, {len(failures)} crossing a layer")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
