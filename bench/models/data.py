"""The benchmark's weights and inputs, made once from a fixed seed (NumPy only).

    python3 bench/models/data.py OUT_DIR [--seed 0]

writes OUT_DIR/WORKLOAD/weights.safetensors and OUT_DIR/WORKLOAD/CASE/NAME.npy, one
folder per case (a workload with several input sizes, like mlp, has several cases).
Every system under test reads these same files.
"""
import argparse
import json
import os
import zlib

import numpy as np

TREE_NODES = 255
DECODE_STEPS = 50
RNN_STEPS = 100
LOOP_ITERATIONS = 100_000


def dense(rng, n_in, n_out, gain=1.0):
    w = rng.standard_normal((n_in, n_out)) * (gain / np.sqrt(n_in))
    return w.astype(np.float32), (0.1 * rng.standard_normal(n_out)).astype(np.float32)


def mlp(rng):
    (w1, b1), (w2, b2), (w3, b3) = dense(rng, 784, 512), dense(rng, 512, 512), dense(rng, 512, 10)
    weights = dict(w1=w1, b1=b1, w2=w2, b2=b2, w3=w3, b3=b3)
    cases = {f"b{n}": {"x": rng.random((n, 784), dtype=np.float32)} for n in (1, 64)}
    return weights, cases


def cnn(rng):
    weights = {}
    for i, (cin, cout) in enumerate([(3, 16), (16, 32), (32, 64)], start=1):
        k = rng.standard_normal((3, 3, cin, cout)) / np.sqrt(9 * cin)
        weights[f"k{i}"] = k.astype(np.float32)
        weights[f"c{i}"] = (0.1 * rng.standard_normal(cout)).astype(np.float32)
    weights["w"], weights["b"] = dense(rng, 4 * 4 * 64, 10)
    return weights, {"1": {"x": rng.random((1, 32, 32, 3), dtype=np.float32)}}


def as_inputs(weights, cases):
    """A workload with its weights as entry inputs: every case carries them, and the
    weights file holds one unused tensor (graph-compile's --weights needs one)."""
    return ({"unused": np.zeros(1, np.float32)},
            {name: dict(inputs, **weights) for name, inputs in cases.items()})


def mlp_dynamic(rng):
    return as_inputs(*mlp(rng))


def cnn_dynamic(rng):
    return as_inputs(*cnn(rng))


def rnn(rng):
    w, b = dense(rng, 64, 256)
    u, _ = dense(rng, 256, 256, gain=0.9)
    xs = rng.uniform(-1, 1, (RNN_STEPS, 64)).astype(np.float32)
    return dict(w=w, u=u, b=b), {"t100": {"xs": xs}}


def loop_overhead(rng):
    # A weights file needs one tensor; the model reads none.
    return {"unused": np.zeros(1, np.float32)}, {"n100k": {"n": np.array(LOOP_ITERATIONS, np.int64)}}


def dispatch(rng):
    return {"unused": np.zeros(1, np.float32)}, {"16": {"x": rng.uniform(-1, 1, 16).astype(np.float32)}}


def balanced_tree(n):
    """Heap order: node i has children 2i+1 and 2i+2 where they exist, else -1."""
    idx = np.arange(n, dtype=np.int64)
    left, right = 2 * idx + 1, 2 * idx + 2
    leaf = left >= n
    return np.where(leaf, -1, left), np.where(leaf, -1, right)


def tree_rnn(rng):
    weights = {}
    weights["w_leaf"], weights["b_leaf"] = dense(rng, 64, 64)
    weights["a"], _ = dense(rng, 64, 64, gain=0.7)
    weights["b_mat"], _ = dense(rng, 64, 64, gain=0.7)
    weights["w"], weights["b"] = dense(rng, 64, 64, gain=0.7)
    left, right = balanced_tree(TREE_NODES)
    xs = rng.uniform(-1, 1, (TREE_NODES, 64)).astype(np.float32)
    inputs = {"root": np.array(0, np.int64), "left": left, "right": right, "xs": xs}
    return weights, {"n255": inputs}


def greedy_margin(weights, start, steps):
    """The smallest gap between the best and second-best logit along the greedy decode
    (in float64): a small one would let rounding differences between systems pick
    different tokens."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    h, tok, margin = np.zeros(128), start, np.inf
    for _ in range(steps):
        h = np.tanh(w["embedding"][tok] @ w["w"] + h @ w["u"] + w["b"])
        top2 = np.sort(h @ w["v"])[-2:]
        margin = min(margin, top2[1] - top2[0])
        tok = int(np.argmax(h @ w["v"]))
        tok = start if tok == 1 else tok
    return margin


def beam(rng):
    start = 2
    while True:  # draws until the decode is well conditioned (a few draws at most)
        weights = {"embedding": rng.standard_normal((1000, 64)).astype(np.float32)}
        weights["w"], weights["b"] = dense(rng, 64, 128)
        weights["u"], _ = dense(rng, 128, 128, gain=0.9)
        weights["v"], _ = dense(rng, 128, 1000, gain=3.0)
        if greedy_margin(weights, start, DECODE_STEPS) > 1e-2:
            break
    inputs = {"start": np.array(start, np.int64), "steps": np.array(DECODE_STEPS, np.int64)}
    return weights, {"s50": inputs}


def mlp_grad(rng):
    """mlp's weights and b64 input (drawn from mlp's seed, so the same values), integer
    labels drawn after them; the weights are entry inputs."""
    weights, cases = mlp(rng)
    case = dict(cases["b64"], y=rng.integers(0, 10, 64).astype(np.int64))
    return as_inputs(weights, {"b64": case})


def rnn_grad(rng):
    """rnn's weights and input (rnn's seed), the weights as entry inputs."""
    return as_inputs(*rnn(rng))


def tree_rnn_grad(rng):
    """tree_rnn's weights and tree (tree_rnn's seed), the weights as entry inputs."""
    return as_inputs(*tree_rnn(rng))


def mlp_train(rng):
    """mlp's weights (the starting point) and mlp_grad's batch of 64 with its labels."""
    weights, cases = mlp(rng)
    return weights, {"b64": dict(cases["b64"], y=rng.integers(0, 10, 64).astype(np.int64))}


def rnn_train(rng):
    """rnn's weights (the starting point) and input."""
    return rnn(rng)


# The forward of each gradient workload alone: the same data.
mlp_loss, rnn_loss, tree_rnn_loss = mlp_grad, rnn_grad, tree_rnn_grad

WORKLOADS = {f.__name__: f for f in (mlp, mlp_dynamic, cnn, cnn_dynamic, rnn, loop_overhead, dispatch, tree_rnn, beam,
                                     mlp_grad, rnn_grad, tree_rnn_grad)}
WORKLOADS.update(mlp_loss=mlp_loss, rnn_loss=rnn_loss, tree_rnn_loss=tree_rnn_loss, mlp_train=mlp_train,
                 rnn_train=rnn_train)
# A workload drawn from another one's seed, so that its values are that one's.
SEED_OF = {"mlp_grad": "mlp", "mlp_loss": "mlp", "rnn_grad": "rnn", "rnn_loss": "rnn",
           "tree_rnn_grad": "tree_rnn", "tree_rnn_loss": "tree_rnn", "mlp_train": "mlp", "rnn_train": "rnn"}

_ST_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64", np.dtype(np.int32): "I32"}


def write_safetensors(path, tensors):
    """The safetensors layout: u64 header length, JSON header, then the raw data."""
    header, blobs, offset = {}, [], 0
    for name, a in sorted(tensors.items()):
        raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _ST_DTYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def generate(out_dir, seed=0):
    """Writes every workload's files; returns {workload: [case, ...]}."""
    layout = {}
    for name, make in WORKLOADS.items():
        seed_name = SEED_OF.get(name, name)
        weights, cases = make(np.random.default_rng([seed, zlib.crc32(seed_name.encode())]))
        folder = os.path.join(out_dir, name)
        os.makedirs(folder, exist_ok=True)
        write_safetensors(os.path.join(folder, "weights.safetensors"), weights)
        for case, inputs in cases.items():
            case_dir = os.path.join(folder, case)
            os.makedirs(case_dir, exist_ok=True)
            for input_name, a in inputs.items():
                np.save(os.path.join(case_dir, f"{input_name}.npy"), a)
        layout[name] = list(cases)
    return layout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    for name, cases in generate(args.out_dir, args.seed).items():
        print(f"{name}: {', '.join(cases)}")


if __name__ == "__main__":
    main()
