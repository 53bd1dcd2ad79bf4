"""Basic indexing and slicing: integers, negative indices, steps, None, Ellipsis,
and an index only known at run time."""
import stagegraph as sg

# e2e: T=2,5 range.i=-6,6 runs=4


@sg.function
def pick(x: sg.f32[6, 5], i: sg.i64):
    a = x[2]              # [5]
    b = x[1:-1]           # [4, 5]
    c = x[::2]            # [3, 5]
    d = x[:, 0]           # [6]
    e = x[..., None]      # [6, 5, 1]
    f = x[-1, -2]         # a scalar
    g = x[i]              # staged index, negative allowed
    h = x[1:5:2, ::-1]    # [2, 5], columns reversed
    k = x[i, 1:4]         # [3]
    return a, b, c, d, e, f, g, h, k


@sg.function
def sequence(seq: sg.f32["T", 3]):
    first = seq[0]
    last = seq[-1]
    steps = seq[1:] - seq[:-1]   # [T-1, 3]
    return first, last, steps, seq[:, 1:]


if __name__ == "__main__":
    import numpy as np

    x = np.arange(30, dtype=np.float32).reshape(6, 5)
    out = pick(x=x, i=np.array(-2, dtype=np.int64))
    print("x[-2] =", out[6])
