"""An RNN that collects its hidden states by concatenation in a staged loop:
the loop-carried `states` grows from [0, 32] to [1, 32] in one iteration. The
error may point at the loop or at the assignment that changes the dim."""
import stagegraph as sg

# expect: error@13|15 naming states


@sg.function
def encode(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32]):
    h = h0
    states = sg.zeros((0, 32))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        states = sg.concatenate([states, h[None, :]], axis=0)
    return states, h
