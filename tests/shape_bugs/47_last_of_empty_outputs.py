"""A sequence model that returns its last output: `outputs` starts empty and
gets one item per step of a staged loop over T, so when T is 0 the loop runs
zero times and `outputs[-1]` reads an empty list (eager mode raises an
IndexError there). The warning points at the read."""
import stagegraph as sg

# expect: warning@18


@sg.function
def last_output(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32],
                V: sg.f32[32, 4]):
    h = h0
    outputs = []
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        outputs.append(h @ V)
    return outputs[-1]
