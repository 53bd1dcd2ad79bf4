"""Swapped carried values: a, b = b, a + b in a staged loop (SPEC §5)."""
import stagegraph as sg

# e2e: range.n=0,40 runs=5


@sg.function
def fib(n: sg.i64):
    a = 0
    b = 1
    for _ in range(n):
        a, b = b, a + b
    return a


@sg.function
def rotate(n: sg.i64, x: sg.f32[2], y: sg.f32[2], z: sg.f32[2]):
    i = 0
    while i < n:
        x, y, z = y, z, x
        i += 1
    return x, y, z


if __name__ == "__main__":
    import numpy as np

    print(fib(n=np.array(10)))
    print(rotate(n=np.array(4), x=np.zeros(2, np.float32), y=np.ones(2, np.float32), z=np.full(2, 2.0, np.float32)))
