"""Writes random inputs for an example's entry point as NAME.npy files, for graph-run.

    python3 examples/make_inputs.py examples/mlp.py out/mlp [--dim N=4] [--seed 0]
        [--entry NAME] [--eager-out DIR]

Symbolic dims are 2 unless --dim sets them. With --eager-out, the entry is also run
in eager mode and its outputs written to DIR/NAME.npy, the reference a graph-run
result is compared with.
"""
import argparse
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compiler", "python"))

import stagegraph as sg  # noqa: E402


def load_module(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        sys.exit(f"make_inputs: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def find_entry(module, wanted):
    entries = {n: v for n, v in vars(module).items() if getattr(v, "__sg_entry__", False)}
    if wanted is not None:
        if wanted not in entries:
            sys.exit(f"make_inputs: no entry point '{wanted}' (found: {', '.join(sorted(entries)) or 'none'})")
        return entries[wanted]
    if len(entries) != 1:
        sys.exit(f"make_inputs: {len(entries)} entry points ({', '.join(sorted(entries))}); choose one with --entry")
    return next(iter(entries.values()))


def random_array(rng, spec, sizes):
    shape = tuple(d if isinstance(d, int) else sizes.get(d, 2) for d in spec.dims)
    if spec.dtype.is_float:
        # Parameters with only static dims are taken for weights: scaled by
        # 1/sqrt(fan-in) (all dims but the last) so activations stay O(1).
        scale = 1.0
        if len(spec.dims) >= 2 and all(isinstance(d, int) for d in spec.dims):
            scale = 1.0 / np.sqrt(max(1, int(np.prod(shape[:-1]))))
        return (rng.uniform(-1, 1, shape) * scale).astype(spec.dtype.np)
    if spec.dtype.is_int:
        return rng.integers(0, 10, shape).astype(spec.dtype.np)
    return rng.random(shape) < 0.5


def output_files(result):
    if isinstance(result, dict):
        return result.items()
    if isinstance(result, tuple):
        return ((f"output_{i}", v) for i, v in enumerate(result))
    return (("output_0", result),)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("example")
    p.add_argument("out_dir")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--entry")
    p.add_argument("--eager-out", metavar="DIR")
    args = p.parse_args()

    sizes = {}
    for item in args.dim:
        name, _, size = item.partition("=")
        if not name or not size.isdigit():
            p.error(f"bad --dim '{item}' (expected NAME=SIZE)")
        sizes[name] = int(size)

    entry = find_entry(load_module(args.example), args.entry)
    annotations = entry.annotations()
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    inputs = {}
    for name in entry.signature.parameters:
        spec = annotations.get(name)
        if not isinstance(spec, (sg.DType, sg.TensorType)):
            sys.exit(f"make_inputs: parameter '{name}' of {entry.__name__} has no sg type annotation")
        inputs[name] = random_array(rng, spec, sizes)
        path = os.path.join(args.out_dir, f"{name}.npy")
        np.save(path, inputs[name])
        print(f"{path}: {sg.TensorType(spec.dtype, inputs[name].shape)}")

    if args.eager_out:
        os.makedirs(args.eager_out, exist_ok=True)
        for name, value in output_files(entry(**inputs)):
            path = os.path.join(args.eager_out, f"{name}.npy")
            np.save(path, value)
            print(f"{path}: eager {value.dtype}{list(value.shape)}")


if __name__ == "__main__":
    main()
