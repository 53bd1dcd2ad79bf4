"""The reference for the gradient workloads (`*_grad`) and their forwards (`*_loss`):
the loss and its gradients by hand-written backpropagation in float64 NumPy,
independent of every system under test.

    python3 bench/models/reference.py WORKLOAD INPUT_DIR OUTPUT_DIR

Inputs are INPUT_DIR/NAME.npy (the weights are entry inputs there); results go to
OUTPUT_DIR/NAME.npy named as graph-run names the entry's results: `loss`, and for a
`*_grad` workload `grads.NAME` for each weight. Eager mode (bench/models/run_eager.py)
is the reference of the other workloads; this one stands in for it here because it
needs no `sg.value_and_grad` in the eager module, and because a float64 gradient by a
different method checks the compiler's adjoints and every peer's alike.
"""
import os
import sys

import numpy as np

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
RNN = ("w", "u", "b")
TREE = ("w_leaf", "b_leaf", "a", "b_mat", "w", "b")


def mlp(x, y, w1, b1, w2, b2, w3, b3):
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = x.shape[0]
    loss = -log_softmax[np.arange(n), y].mean()
    d_logits = np.exp(log_softmax)
    d_logits[np.arange(n), y] -= 1
    d_logits /= n
    d_z2 = (d_logits @ w3.T) * (z2 > 0)
    d_z1 = (d_z2 @ w2.T) * (z1 > 0)
    grads = dict(w1=x.T @ d_z1, b1=d_z1.sum(0), w2=h1.T @ d_z2, b2=d_z2.sum(0),
                 w3=h2.T @ d_logits, b3=d_logits.sum(0))
    return loss, grads


def rnn(xs, w, u, b):
    hs = [np.zeros(u.shape[0])]
    for x in xs:
        hs.append(np.tanh(x @ w + hs[-1] @ u + b))
    loss = np.sum(hs[-1] ** 2)
    d_h = 2 * hs[-1]
    grads = dict(w=np.zeros_like(w), u=np.zeros_like(u), b=np.zeros_like(b))
    for t in range(len(xs) - 1, -1, -1):   # through time, backwards
        d_z = d_h * (1 - hs[t + 1] ** 2)
        grads["w"] += np.outer(xs[t], d_z)
        grads["u"] += np.outer(hs[t], d_z)
        grads["b"] += d_z
        d_h = d_z @ u.T
    return loss, grads


def tree_rnn(root, left, right, xs, **p):
    states = {}

    def encode(i):
        if left[i] < 0:
            h = np.tanh(xs[i] @ p["w_leaf"] + p["b_leaf"])
        else:
            h = np.tanh(encode(left[i]) @ p["a"] + encode(right[i]) @ p["b_mat"] + xs[i] @ p["w"] + p["b"])
        states[i] = h
        return h

    loss = np.sum(encode(int(root)))
    grads = {k: np.zeros_like(v) for k, v in p.items()}

    def back(i, d_h):
        d_z = d_h * (1 - states[i] ** 2)
        if left[i] < 0:
            grads["w_leaf"] += np.outer(xs[i], d_z)
            grads["b_leaf"] += d_z
            return
        grads["a"] += np.outer(states[left[i]], d_z)
        grads["b_mat"] += np.outer(states[right[i]], d_z)
        grads["w"] += np.outer(xs[i], d_z)
        grads["b"] += d_z
        back(left[i], d_z @ p["a"].T)
        back(right[i], d_z @ p["b_mat"].T)

    back(int(root), np.ones(p["b"].shape[0]))
    return loss, grads


def reference(workload, inputs):
    """{name: array} as graph-run names the entry's results, float32."""
    x = {k: (v.astype(np.float64) if v.dtype.kind == "f" else v) for k, v in inputs.items()}
    base, kind = workload.rsplit("_", 1)
    if base == "mlp":
        loss, grads = mlp(x["x"], x["y"], *(x[k] for k in MLP))
    elif base == "rnn":
        loss, grads = rnn(x["xs"], *(x[k] for k in RNN))
    elif base == "tree_rnn":
        loss, grads = tree_rnn(x["root"], x["left"], x["right"], x["xs"], **{k: x[k] for k in TREE})
    else:
        raise ValueError(f"no reference for {workload}")
    out = {"loss": np.float32(loss)}
    if kind == "grad":
        out.update({f"grads.{k}": g.astype(np.float32) for k, g in grads.items()})
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    workload, input_dir, output_dir = sys.argv[1:]
    inputs = {f[:-4]: np.load(os.path.join(input_dir, f)) for f in os.listdir(input_dir) if f.endswith(".npy")}
    sys.setrecursionlimit(10_000)
    os.makedirs(output_dir, exist_ok=True)
    for name, value in reference(workload, inputs).items():
        np.save(os.path.join(output_dir, f"{name}.npy"), np.asarray(value, np.float32))
    print(f"reference {workload}: {len(inputs)} inputs")


if __name__ == "__main__":
    main()
