#!/usr/bin/env python3
"""One op, one family name in every layer (DESIGN.md, "Op families").

kernels/ops/op_families.h gives every op of the op table its family F. Each layer
that implements an op must do it in the file of F's stem:

  shape rule        kernels/ops/infer_F.cc        the rule infer.cc's SG_RULE names
  reference kernel  kernels/reference/F.cc        the family function kernel_table.cc's SG_ROUTE names
  CUDA kernel       kernels/cuda/F.cu             the run_* function prepare.cc's switch calls
  staging           compiler/staging/sg_F.cc      the handler sg_dispatch.cc's table gives sg.NAME
  eager module      compiler/python/stagegraph/_F.py (or F.py, the public submodule)
                                                  where __init__.py imports sg.NAME from, else
                                                  the one top-level `def NAME(`

Each implementation is found mechanically from the routing file of its layer. A
function shared by ops of several families (run_conv2d: conv2d, conv2d_bias) may
sit in the file of any of them. A family too large for one file in a layer splits
it into parts, <family>_<part> (reference/elementwise_binary.cc). A layer may lack
a family. Every file of a layer named like a family file is one of a family (or a
part of one), or infrastructure listed below.

    tools/lint/op_families.py [ROOT]     exit 1 naming each misplaced op
"""
import os
import re
import sys

FAMILIES_H = "kernels/ops/op_families.h"
OP_TABLE_H = "kernels/ops/op_table.h"

# Per layer: the folder, how a family file is named, and the files of that form
# that are not families (shared infrastructure).
LAYERS = {
    "shape rule": ("kernels/ops", "infer_{}.cc", {"infer_rules"}),
    "reference kernel": ("kernels/reference", "{}.cc", {"kernel_table", "kernel_util"}),
    "CUDA kernel": ("kernels/cuda", "{}.cu", {"context", "gemm"}),
    "staging": ("compiler/staging", "sg_{}.cc",
                {"sg_dispatch", "sg_ops", "sg_ops_everyday", "sg_einsum", "sg_grad", "sg_variables", "sg_tree"}),
    "eager module": ("compiler/python/stagegraph", "_{}.py",
                     {"__init__", "_autodiff", "_dtypes", "_everyday", "_kernels", "_quantize", "_registry",
                      "_staging", "_tape", "_tensor", "_tree", "_variables", "_binding"}),
}


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def op_names(root):
    """OpId enum name -> op name, from SG_OPS."""
    return dict(re.findall(r'^  X\((\w+), "(\w+)"', read(root, OP_TABLE_H), re.M))


def families(root):
    text = read(root, FAMILIES_H)
    table = text[text.index("kOpFamilies[] = {"):text.index("// end of op families")]
    family_of = {}
    for name, body in re.findall(r'\{"(\w+)",((?:\s*"[^"]*")+)\}', table):
        for op in " ".join(re.findall(r'"([^"]*)"', body)).split():
            family_of[op] = name
    return family_of


def definitions(root, folder, ext, pattern):
    """function name -> files (relative) in folder/*ext whose text defines it."""
    found = {}
    for name in sorted(os.listdir(os.path.join(root, folder))):
        if not name.endswith(ext):
            continue
        path = os.path.join(folder, name)
        for fn in re.findall(pattern, read(root, path), re.M):
            found.setdefault(fn, set()).add(path)
    return found


def routed(text, macro, ids):
    """(function, [op names]) for each MACRO(function, OpId::X, ...) in text."""
    out = []
    for fn, args in re.findall(macro + r"\((\w+),([^;]*?)\);", text, re.S):
        if "OpId::" in args:
                out.append((fn, [ids[e] for e in re.findall(r"OpId::(\w+)", args)]))
    return out


def rule_impls(root, ids):
    text = read(root, "kernels/ops/infer.cc")
    defs = definitions(root, "kernels/ops", ".cc", r"^Status (infer_\w+)\(const Rule<D>&")
    return [(fn, ops, defs.get(fn, set())) for fn, ops in routed(text, "SG_RULE", ids)]


def reference_impls(root, ids):
    text = read(root, "kernels/reference/kernel_table.cc")
    defs = definitions(root, "kernels/reference", ".cc", r"^KernelFn (\w+)\(ops::OpId op\)")
    return [(fn, ops, defs.get(fn, set())) for fn, ops in routed(text, "SG_ROUTE", ids)]


def cuda_impls(root, ids):
    text = read(root, "kernels/cuda/prepare.cc")
    run = text[text.index("Status run(Context& ctx"):text.index("const char* name() const override")]
    calls = {}
    for cases, fn in re.findall(r"((?:case OpId::\w+:\s*)+)return (\w+)\(", run):
        for e in re.findall(r"OpId::(\w+)", cases):
            calls.setdefault(fn, []).append(ids[e])
    flags = {"kElementwiseBinary": [], "kElementwiseUnary": []}
    for e, flag in re.findall(r'^  X\((\w+), "\w+",[^)]*?(kElementwiseBinary|kElementwiseUnary)',
                               read(root, OP_TABLE_H), re.M):
        flags[flag].append(ids[e])
    for flag, fn in re.findall(r"has_flag\(op_, ops::(\w+)\)\) return (\w+)\(", run):
        calls.setdefault(fn, []).extend(flags[flag])
    defs = definitions(root, "kernels/cuda", ".cu", r"^Status (run_\w+)\(")
    return [(fn, ops, defs.get(fn, set())) for fn, ops in calls.items()]


def staging_impls(root, names):
    text = read(root, "compiler/staging/sg_dispatch.cc")
    table = text[text.index("const Entry kTable[] = {"):]
    defs = definitions(root, "compiler/staging", ".cc",
                       r"^Value (\w+)\(Stager& s, const Args& a, const std::string&")
    calls = {}
    for name, fn in re.findall(r'\{"([\w.]+)", (\w+)\}', table):
        op = name[len("linalg."):] if name.startswith("linalg.") else name
        if op in names:
            calls.setdefault(fn, []).append(op)
    return [(fn, ops, defs.get(fn, set())) for fn, ops in calls.items()]


def eager_impls(root, names):
    folder = "compiler/python/stagegraph"
    exported = {}
    for module, body in re.findall(r"^from \.(\w+) import \(?([^)\n]*(?:\n[^)\n]*)*?)\)?$",
                                   read(root, folder + "/__init__.py"), re.M):
        for n in re.findall(r"\w+", re.sub(r"#[^\n]*", "", body)):
            exported[n] = module
    defs = definitions(root, folder, ".py", r"^def (\w+)\(")
    out = []
    for op in sorted(names):
        if op in exported:
            out.append((op, [op], {f"{folder}/{exported[op]}.py"}))
        elif op in defs:
            out.append((op, [op], defs[op]))
    return out


def family_file(layer, family):
    folder, form, _ = LAYERS[layer]
    return f"{folder}/{form.format(family)}"


def in_family_file(layer, path, families_of_fn):
    """Whether path is the file of one of these families, or a part of one
    (<family>_<part>: a family too large for one file of this layer)."""
    folder, form, _ = LAYERS[layer]
    prefix, suffix = form.split("{}")
    name = os.path.basename(path)
    if os.path.dirname(path) != folder or not (name.startswith(prefix) and name.endswith(suffix)):
        return False
    stem = name[len(prefix):len(name) - len(suffix)]
    return any(stem == f or stem.startswith(f + "_") for f in families_of_fn)


def check(root):
    ids = op_names(root)
    names = set(ids.values())
    family_of = families(root)
    errors = [f"{FAMILIES_H}: op '{op}' has no family" for op in sorted(names - family_of.keys())]
    errors += [f"{FAMILIES_H}: '{op}' is not an op" for op in sorted(family_of.keys() - names)]
    impls = {
        "shape rule": rule_impls(root, ids),
        "reference kernel": reference_impls(root, ids),
        "CUDA kernel": cuda_impls(root, ids),
        "staging": staging_impls(root, names),
        "eager module": eager_impls(root, names),
    }
    for layer, found in impls.items():
        seen = set()
        for fn, ops, files in found:
            fams = {family_of[op] for op in ops if op in family_of}
            seen.update(ops)
            if not fams:  # reported above: an op without a family
                continue
            allowed = {family_file(layer, f) for f in fams}
            if layer == "eager module":  # sg.linalg, sg.random: the public submodule
                allowed |= {f"compiler/python/stagegraph/{f}.py" for f in fams}
            if not files:
                errors.append(f"{layer}: found no definition of {fn} ({', '.join(ops)})")
            for path in sorted(p for p in files - allowed if not in_family_file(layer, p, fams)):
                want = " or ".join(sorted(allowed))
                errors.append(f"{path}: {layer} {fn} of {', '.join(ops)} belongs in {want}")
        if layer != "eager module" and not seen:
            errors.append(f"{layer}: found no implementation at all (has the routing file changed?)")
    all_families = set(family_of.values())
    for layer, (folder, form, infrastructure) in LAYERS.items():
        prefix, suffix = form.split("{}")
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not (name.startswith(prefix) and name.endswith(suffix)):
                continue
            stem = name[:len(name) - len(suffix)]
            family = stem[len(prefix):]
            if stem in infrastructure or any(family == f or family.startswith(f + "_") for f in all_families):
                continue
            errors.append(f"{folder}/{name}: named like a {layer} family file, but '{stem[len(prefix):]}' "
                          f"is no family ({FAMILIES_H}) and not listed as infrastructure")
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} op(s) outside their family's file (DESIGN.md, 'Op families')")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
