"""Fixed twin of 47: the last output is computed from the state after the
loop, which is h0 when the loop runs zero times."""
import stagegraph as sg

# expect: clean


@sg.function
def last_output(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32],
                V: sg.f32[32, 4]):
    h = h0
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
    return h @ V
