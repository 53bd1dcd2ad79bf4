"""Module-level constants used inside an entry: numbers, tuples and tensors built
by the op library from constants."""
import stagegraph as sg

HIDDEN = 3
SCALE = 0.5
OFFSETS = (1.0, -2.0, 3.0)
BIAS = sg.full((HIDDEN,), 0.25)
ONES = sg.ones((2, HIDDEN))
COUNTS = sg.zeros((HIDDEN,), dtype=sg.i32)
IDENTITY = sg.eye(HIDDEN)

# e2e: N=1,3


@sg.function
def apply(x: sg.f32["N", HIDDEN]):
    offsets = sg.stack([o for o in OFFSETS])
    y = x @ IDENTITY * SCALE + offsets + BIAS
    first = x[:, 0] * OFFSETS[0] + OFFSETS[2]
    return y, first


@sg.function
def tally(m: sg.i32[2, HIDDEN]):
    total = sg.sum(ONES, axis=0) + sg.sum(m, axis=0).astype(sg.f32)
    return total, COUNTS + m[0]


if __name__ == "__main__":
    import numpy as np

    print(apply(x=np.ones((2, HIDDEN), dtype=np.float32)))
    print(tally(m=np.arange(6, dtype=np.int32).reshape(2, HIDDEN)))
