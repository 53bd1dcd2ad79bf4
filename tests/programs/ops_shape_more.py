"""Shape ops: tile, pad (NumPy's pad_width forms), split (equal sections, a
dim known only at run time, split indices), and item assignment through
slice_update, with an index known only at run time."""
import stagegraph as sg

# e2e: N=1,3 range.i=-5,5 runs=3


@sg.function
def tile_pad(x: sg.f32["N", 4]):
    t = sg.tile(x, (2, 3))                                    # [2N, 12]
    t1 = sg.tile(x, 2)                                        # [N, 8]
    t3 = sg.tile(x, (2, 1, 1))                                # [2, N, 4]
    p = sg.pad(x, 1)                                          # [N+2, 6]
    p2 = sg.pad(x, ((0, 0), (2, 1)), constant_values=-1.5)    # [N, 7]
    p3 = sg.pad(x, (1, 2))                                    # [N+3, 7]
    pi = sg.pad(sg.astype(x > 0.0, sg.i32), [[1, 0], [0, 2]], constant_values=7)
    return t, t1, t3, p, p2, p3, pi


@sg.function
def split_parts(x: sg.f32["N", 6]):
    a, b, c = sg.split(x, 3, axis=1)               # static: [N, 2] each
    parts = sg.split(x, [1, 4], axis=-1)           # [N, 1], [N, 3], [N, 2]
    top, bottom = sg.split(sg.tile(x, (2, 1)), 2)  # the dim 2N known at run time
    rows = sg.split(x, [0, 10], axis=1)            # NumPy clamps: [N, 0], [N, 6], [N, 0]
    return a, b, c, parts[0], parts[1], parts[2], top - bottom, rows[0], rows[1], rows[2]


@sg.function
def assign(x: sg.f32[5, 4], i: sg.i64):
    y = x * 1.0
    y[0] = 5.0                      # a row, number broadcast
    y[1:3, 2] = sg.ones((2,)) * 2.0
    y[i, 0] = 7                     # staged index; int into f32 is f32
    y[-1, 1:] = y[0, 1:] + 1.0
    y[:, 3] += 10.0
    m = sg.zeros((5,), dtype=sg.i64)
    m[i] = 3                        # staged index into an i64 tensor
    w = sg.zeros((3, 3))
    w[1, 1] = 1.0                   # static: folded
    w[::2, 0] = sg.ones((2,))
    return y, m, w


if __name__ == "__main__":
    import numpy as np

    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    print([o.shape for o in tile_pad(x=x)])
    print([o.shape for o in split_parts(x=np.arange(12, dtype=np.float32).reshape(2, 6))])
    y, m, w = assign(x=np.zeros((5, 4), dtype=np.float32), i=np.array(-2, dtype=np.int64))
    print(y, m, w, sep="\n")
