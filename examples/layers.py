"""A classifier written the way model code usually is: a class per layer that
loads its weights with sg.weight (Dense, LayerNorm), a residual block built
from them, and a Model class composing embedding, blocks and head.

    PYTHONPATH=compiler/python python3 examples/layers.py    # eager; writes layers.safetensors
    graph-compile examples/layers.py --weights layers.safetensors -o layers.sgraph
    graph-run layers.sgraph --input x=x.npy
"""
import stagegraph as sg

FEATURES = 16
WIDTH = 32
CLASSES = 4
DEPTH = 2


class Dense:
    """y = activation(x @ w + b), with w and b from the weights file."""

    def __init__(self, name, activation=None):
        self.w = sg.weight(name + ".w")
        self.b = sg.weight(name + ".b")
        self.activation = activation

    def __call__(self, x):
        y = x @ self.w + self.b
        if self.activation == "relu":
            y = sg.relu(y)
        elif self.activation == "gelu":
            y = sg.gelu(y)
        return y


class LayerNorm:
    def __init__(self, name, eps=1e-5):
        self.gamma = sg.weight(name + ".gamma")
        self.beta = sg.weight(name + ".beta")
        self.eps = eps

    def __call__(self, x):
        mu = x.mean(axis=-1, keepdims=True)
        var = sg.square(x - mu).mean(axis=-1, keepdims=True)
        return (x - mu) * sg.rsqrt(var + self.eps) * self.gamma + self.beta


class ResidualBlock:
    def __init__(self, name):
        self.norm = LayerNorm(name + ".norm")
        self.up = Dense(name + ".up", activation="gelu")
        self.down = Dense(name + ".down")

    def __call__(self, x):
        return x + self.down(self.up(self.norm(x)))


class Model:
    def __init__(self, depth=DEPTH):
        self.embed = Dense("embed", activation="relu")
        self.blocks = [ResidualBlock(f"block{i}") for i in range(depth)]
        self.head = Dense("head")

    def __call__(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return sg.softmax(self.head(h))


@sg.function
def classify(x: sg.f32["N", FEATURES]):
    return Model()(x)


def make_weights(seed=0):
    """Random weights for every sg.weight name the model reads (NumPy arrays)."""
    import numpy as np

    rng = np.random.default_rng(seed)

    def dense(name, n_in, n_out, out):
        out[name + ".w"] = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        out[name + ".b"] = (rng.standard_normal(n_out) * 0.1).astype(np.float32)

    w = {}
    dense("embed", FEATURES, WIDTH, w)
    for i in range(DEPTH):
        w[f"block{i}.norm.gamma"] = (1.0 + 0.1 * rng.standard_normal(WIDTH)).astype(np.float32)
        w[f"block{i}.norm.beta"] = (0.1 * rng.standard_normal(WIDTH)).astype(np.float32)
        dense(f"block{i}.up", WIDTH, 2 * WIDTH, w)
        dense(f"block{i}.down", 2 * WIDTH, WIDTH, w)
    dense("head", WIDTH, CLASSES, w)
    return w


if __name__ == "__main__":
    import numpy as np

    sg.write_safetensors("layers.safetensors", make_weights())
    sg.load_weights("layers.safetensors")
    x = np.random.default_rng(1).standard_normal((3, FEATURES)).astype(np.float32)
    np.save("x.npy", x)
    probs = classify(x)
    np.set_printoptions(precision=4, suppress=True)
    print("probabilities:", probs.dtype, probs.shape)
    print(probs)
