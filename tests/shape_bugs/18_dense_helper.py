"""An MLP built from an inlined helper; the second layer is passed the first
layer's bias ([256]) beside a [N, 64] product. The error may point at the op
inside the helper (with the call as a note) or at the call."""
import stagegraph as sg

# expect: error@10|17


def dense(x, w, b):
    return sg.relu(x @ w + b)


@sg.function
def mlp(x: sg.f32["N", 784], w1: sg.f32[784, 256], b1: sg.f32[256],
        w2: sg.f32[256, 64], b2: sg.f32[64], w3: sg.f32[64, 10], b3: sg.f32[10]):
    h = dense(x, w1, b1)
    h = dense(h, w2, b1)
    return h @ w3 + b3
