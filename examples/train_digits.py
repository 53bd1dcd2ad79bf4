"""Training on the runtime (SPEC §12): an MLP (64 -> 32 -> 10) learns scikit-learn's
bundled 8x8 digits (1,797 images, shipped with the package: no download) with Adam.

The weights and the optimizer's state are program variables: each Session holds its
own, every run of `train_step` reads them as they were when it started and stores
its assignments when it succeeds. `predict` reads the same variables.

    graph-compile examples/train_digits.py -o digits.sgraph
    python3 examples/train_digits.py --write-data DIR     # DIR/x.npy, y.npy: batches
    graph-run digits.sgraph --entry train_step --steps 300 --print-every 50 \
        --input x=DIR/x.npy --input y=DIR/y.npy --save-variables digits.safetensors

Run as a script with no arguments, it trains in eager mode and prints the accuracy.
"""
import stagegraph as sg
from stagegraph import optim

HIDDEN = 32
BATCH = 64


def init_params(seed):
    # A fixed spread of values known when the program is compiled (the variables'
    # initial values): sin of a scrambled index, scaled like a Xavier draw.
    def fixed(rows, cols, salt):
        i = sg.reshape(sg.arange(rows * cols, dtype=sg.f32), (rows, cols))
        return sg.sin(i * 12.9898 + salt) * (2.0 / (rows + cols)) ** 0.5 * 1.7

    return {
        "w1": fixed(64, HIDDEN, seed + 1.0),
        "b1": sg.zeros((HIDDEN,)),
        "w2": fixed(HIDDEN, 10, seed + 2.0),
        "b2": sg.zeros((10,)),
    }


def logits(p, x):
    h = sg.tanh(x @ p["w1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


opt = optim.adam(lr=0.01)
params = init_params(0)
state = sg.variables(params=params, opt=opt.init(params))


@sg.function
def train_step(x: sg.f32["N", 64], y: sg.i64["N"]):
    loss, g = sg.value_and_grad(lambda p: sg.nn.cross_entropy(logits(p, x), y))(state.params)
    state.params, state.opt = opt.update(state.params, g, state.opt)
    return loss


@sg.function
def predict(x: sg.f32["N", 64]):
    return sg.argmax(logits(state.params, x), axis=1)


# ---- data (scikit-learn's digits), for the test and the script -----------------------

def dataset():
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1], a fixed 80/20 split."""
    import numpy as np
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    x, y = x[order], y[order]
    cut = int(len(y) * 0.8)
    return x[:cut], y[:cut], x[cut:], y[cut:]


def batches(x, y, steps, seed=1):
    """[steps, BATCH, 64] and [steps, BATCH]: one shuffled batch per step."""
    import numpy as np
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.choice(len(y), BATCH, replace=False) for _ in range(steps)])
    return x[idx], y[idx]


if __name__ == "__main__":
    import os
    import sys
    import numpy as np
    x_train, y_train, x_test, y_test = dataset()
    if len(sys.argv) == 3 and sys.argv[1] == "--write-data":
        xb, yb = batches(x_train, y_train, 300)
        os.makedirs(sys.argv[2], exist_ok=True)
        np.save(os.path.join(sys.argv[2], "x.npy"), xb)
        np.save(os.path.join(sys.argv[2], "y.npy"), yb)
        np.save(os.path.join(sys.argv[2], "x_test.npy"), x_test)
        np.save(os.path.join(sys.argv[2], "y_test.npy"), y_test)
        sys.exit(0)
    xb, yb = batches(x_train, y_train, 300)
    for step in range(300):
        loss = train_step(xb[step], yb[step])
        if step % 50 == 0:
            print(f"step {step}: loss {float(np.asarray(loss)):.4f}")
    accuracy = float(np.mean(np.asarray(predict(x_test)) == y_test))
    print(f"test accuracy {accuracy:.3f}")
