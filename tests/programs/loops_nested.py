"""Nested staged loops: both trip counts known only at run time (SPEC §5)."""
import stagegraph as sg

# e2e: range.n=0,5 range.m=0,4 runs=4


@sg.function
def grid_sum(n: sg.i64, m: sg.i64):
    total = sg.zeros((), dtype=sg.i64)
    i = 0
    while i < n:
        for j in range(m):
            total = total + i * 10 + j
        i += 1
    return total


@sg.function
def triangle(n: sg.i64, x: sg.f32[3]):
    acc = x * 0.0
    for i in range(n):
        for j in range(i):
            acc = acc * 0.5 + x
    return acc


if __name__ == "__main__":
    import numpy as np

    print(grid_sum(n=np.array(3), m=np.array(2)))
    print(triangle(n=np.array(4), x=np.ones(3, np.float32)))
