"""Fixed twin of 18: each layer gets its own bias."""
import stagegraph as sg

# expect: clean


def dense(x, w, b):
    return sg.relu(x @ w + b)


@sg.function
def mlp(x: sg.f32["N", 784], w1: sg.f32[784, 256], b1: sg.f32[256],
        w2: sg.f32[256, 64], b2: sg.f32[64], w3: sg.f32[64, 10], b3: sg.f32[10]):
    h = dense(x, w1, b1)
    h = dense(h, w2, b2)
    return h @ w3 + b3
