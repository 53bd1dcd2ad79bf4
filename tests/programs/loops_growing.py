"""Values a staged loop grows (SPEC §5): a key/value cache grown by concatenate gets
a symbolic dim of its own, with no sg.relax, and keeps it through the next loop; a
list of outputs the loop may leave empty stacks to the empty stack."""
import stagegraph as sg

# e2e: T=3,5 range.n=0,4 runs=6


@sg.function
def decode(x: sg.f32["T", 4], q: sg.f32[4], n: sg.i64):
    # Attention over a cache that grows by one row per step, from empty.
    keys = sg.zeros((0, 4))
    outs = []
    h = q
    for t in range(n):
        keys = sg.concatenate([keys, x[t % x.shape[0]][None, :] + h[None, :]])
        w = sg.softmax(keys @ h)
        h = sg.tanh(w @ keys)
        outs.append(h)
    for t in range(n):
        keys = sg.concatenate([keys, keys[-1:] * 0.5])
    return sg.stack(outs), keys, h


@sg.function
def scores(x: sg.f32["T", 4], q: sg.f32[4], n: sg.i64):
    ys = []
    for t in range(n):
        ys.append(sg.softmax(x[t % x.shape[0]] * q))
    return sg.stack(ys)
