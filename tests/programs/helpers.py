"""Plain Python helper functions, inlined at each call site, with keyword and
default arguments."""
import stagegraph as sg

# e2e: N=1,3 scale.w1=0.35 scale.w2=0.25


def dense(x, w, b=None, activation="relu", scale=1.0):
    y = x @ w
    if b is not None:
        y = y + b
    if activation == "relu":
        y = sg.relu(y)
    elif activation == "tanh":
        y = sg.tanh(y)
    return y * scale


def normalize(v, axis=-1, eps=1e-5):
    mu = sg.mean(v, axis=axis, keepdims=True)
    var = sg.mean(sg.square(v - mu), axis=axis, keepdims=True)
    return (v - mu) * sg.rsqrt(var + eps)


@sg.function
def two_layer(x: sg.f32["N", 8], w1: sg.f32[8, 16], b1: sg.f32[16], w2: sg.f32[16, 4]):
    h = dense(x, w1, b1)
    h = normalize(h + 1.0, eps=1e-3)
    return dense(h, w2, activation="tanh", scale=0.5), dense(x=h, w=w2, activation=None)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(3)
    out, raw = two_layer(x=rng.standard_normal((2, 8)).astype(np.float32),
                         w1=rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
                         b1=np.zeros(16, np.float32),
                         w2=rng.standard_normal((16, 4)).astype(np.float32) * 0.3)
    print(out, raw, sep="\n")
