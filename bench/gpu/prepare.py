"""The GPU benchmarks' weights (bench/gpu/README.md): for mlp and rnn, the same
values as bench/models/data.py makes (seed 0), written twice: as
OUT_DIR/WORKLOAD/weights.safetensors for graph-compile --weights, and as one
NAME.npy per weight for the benchmark's direct cuBLASLt / kernel baseline.

    python3 bench/gpu/prepare.py OUT_DIR
"""
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import data  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: prepare.py OUT_DIR")
    out = sys.argv[1]
    for name in ("mlp", "rnn", "loop_overhead"):
        # The generator data.generate() uses for this workload.
        rng = np.random.default_rng([0, zlib.crc32(name.encode())])
        weights, _ = data.WORKLOADS[name](rng)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        data.write_safetensors(os.path.join(folder, "weights.safetensors"), weights)
        for key, value in weights.items():
            np.save(os.path.join(folder, f"{key}.npy"), value)
        print(f"{name}: {', '.join(sorted(weights))}")


if __name__ == "__main__":
    main()
