"""Runs one benchmark model in eager mode, the reference every system is checked against.

    PYTHONPATH=compiler/python /usr/bin/python3 bench/models/run_eager.py \
        MODEL.py WEIGHTS.safetensors INPUT_DIR OUTPUT_DIR

Inputs are INPUT_DIR/NAME.npy for each parameter of the model's entry point; results
go to OUTPUT_DIR/NAME.npy, named as graph-run names them (output_0, ... or dict keys).
"""
import importlib.util
import os
import sys
import time

import numpy as np

import stagegraph as sg


def load_entry(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entries = [v for v in vars(module).values() if getattr(v, "__sg_entry__", False)]
    if len(entries) != 1:
        sys.exit(f"run_eager: {path} has {len(entries)} entry points, expected one")
    return entries[0]


def flattened(prefix, value):
    """A nested result's leaves named by their path with dots, as graph-run names them
    (SPEC §2: `grads.w1`, `grads.0.1`)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from flattened(f"{prefix}.{k}", v)
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from flattened(f"{prefix}.{i}", v)
    else:
        yield prefix, value


def named_outputs(result):
    if isinstance(result, dict):
        return (leaf for k, v in result.items() for leaf in flattened(k, v))
    if isinstance(result, tuple):
        return (leaf for i, v in enumerate(result) for leaf in flattened(f"output_{i}", v))
    return (("output_0", result),)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    model, weights, input_dir, output_dir = sys.argv[1:]
    sg.load_weights(weights)
    entry = load_entry(model)
    inputs = {n: np.load(os.path.join(input_dir, f"{n}.npy")) for n in entry.signature.parameters}
    start = time.perf_counter()
    result = entry(**inputs)
    elapsed = time.perf_counter() - start
    os.makedirs(output_dir, exist_ok=True)
    for name, value in named_outputs(result):
        np.save(os.path.join(output_dir, f"{name}.npy"), value)
    print(f"eager {entry.__name__}: {elapsed * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
