"""A scorer that returns its best score: `scores` starts empty (relaxed to a
symbolic length) and gets one score per step of a staged loop over T, so when
T is 0 the loop runs zero times and `sg.max(scores)` reduces an empty axis
(eager mode raises a ValueError there). The warning points at the max."""
import stagegraph as sg

# expect: warning@18


@sg.function
def best_score(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32],
               v: sg.f32[32]):
    h = h0
    scores = sg.relax(sg.zeros((0,)), "S", 0)
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        scores = sg.concatenate([scores, sg.expand_dims(h @ v, 0)])
    return sg.max(scores)
