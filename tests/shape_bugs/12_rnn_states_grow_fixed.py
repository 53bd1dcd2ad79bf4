"""Fixed twin of 12: the rows join on axis 0; the loop-carried `states` grows from
[0, 32] by a row per iteration, and its row count becomes a symbolic dim."""
import stagegraph as sg

# expect: clean


@sg.function
def encode(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32]):
    h = h0
    states = sg.zeros((0, 32))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        states = sg.concatenate([states, h[None, :]], axis=0)
    return states, h
