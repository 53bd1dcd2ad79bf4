"""Greedy CTC decoding: the best class per frame, repeats collapsed, blanks (class
0) dropped. Once with a mask, as NumPy code does it, once as a loop."""
import stagegraph as sg


@sg.function
def ctc_greedy(logits: sg.f32["T", "C"]):
    best = sg.argmax(logits, axis=1)
    prev = sg.concatenate([sg.full((1,), -1, dtype=sg.i64), best[:-1]])
    keep = (best != prev) & (best != 0)
    return best[keep]


@sg.function
def ctc_greedy_loop(logits: sg.f32["T", "C"]):
    out = []
    prev = -1
    for t in range(logits.shape[0]):
        c = sg.argmax(logits[t])
        if c != prev and c != 0:
            out.append(c)
        prev = c
    return sg.stack(out)
