"""Fixed twin of 48: the best score is a running maximum that starts below
every score, so it is defined when the loop runs zero times."""
import stagegraph as sg

# expect: clean


@sg.function
def best_score(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32],
               v: sg.f32[32]):
    h = h0
    best = sg.full((), -1e30)
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        best = sg.maximum(best, h @ v)
    return best
