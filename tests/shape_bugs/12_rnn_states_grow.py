"""An RNN that collects its hidden states by concatenation in a staged loop, on
the wrong axis: `states` is [0, 32] and each new row [1, 32], so joining them on
axis 1 fails on the first iteration (dim 0 differs)."""
import stagegraph as sg

# expect: error@15


@sg.function
def encode(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32]):
    h = h0
    states = sg.zeros((0, 32))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        states = sg.concatenate([states, h[None, :]], axis=1)
    return states, h
