"""Straight-line loops over small carried values, which the runtime runs on a
register file (runtime/src/executor_registers.cc): swaps of carried values, a
carried flag as the test, values passed through unchanged, inputs the loop starts
from and the caller still returns, small vectors, nested loops and every dtype.
"""
import stagegraph as sg

# e2e: range.n=0,40 range.a=1,500 range.b=1,500 runs=6


@sg.function
def fib(n: sg.i64):
    # a, b = b, a + b: a result that is another carried value.
    a = sg.zeros((), dtype=sg.i64)
    b = sg.ones((), dtype=sg.i64)
    i = sg.zeros((), dtype=sg.i64)
    while i < n:
        a, b = b, a + b
        i += 1
    return a, b


@sg.function
def gcd_steps(a: sg.i64, b: sg.i64):
    # The loop starts from the inputs, which are also returned.
    x, y = a, b
    steps = sg.zeros((), dtype=sg.i32)
    while y != 0:
        x, y = y, x % y
        steps = steps + 1
    return {"gcd": x, "steps": steps, "a": a, "b": b}


@sg.function
def flagged(n: sg.i64):
    # The test is a carried bool, and the loop counts in f32 and i32 besides.
    i = sg.zeros((), dtype=sg.i64)
    go = i < n
    half = sg.zeros(())
    odd = sg.zeros((), dtype=sg.i32)
    while go:
        half = half + 0.5
        odd = sg.where(i % 2 == 1, odd + 1, odd)
        i = i + 1
        go = i < n
    return half, odd, go


@sg.function
def small_vector(n: sg.i64, a: sg.i64):
    # f32[4] and bool[3] carried: vectors that fit a register.
    v = sg.zeros((4,))
    w = sg.astype(sg.arange(4), sg.f32) * 0.25
    seen = sg.zeros((3,), dtype=sg.bool)
    for i in range(n):
        v = sg.maximum(v * 0.5 + w, v - 1.0)
        seen = sg.logical_or(seen, sg.arange(3) == (i + a) % 5)
    return v, seen


@sg.function
def nested(n: sg.i64, a: sg.i64):
    # An inner scalar loop inside an outer one that carries a tensor.
    total = sg.zeros((), dtype=sg.i64)
    hist = sg.zeros((8,), dtype=sg.i64)
    for i in range(n):
        k = (a + i) % 7
        j = sg.zeros((), dtype=sg.i64)
        while j < k:
            total = total + j * i
            j = j + 1
        hist = hist + sg.astype(sg.arange(8) == k, sg.i64)
    return total, hist


if __name__ == "__main__":
    import numpy as np

    print(fib(n=np.array(30)))
    print(gcd_steps(a=np.array(1071), b=np.array(462)))
    print(flagged(n=np.array(7)))
    print(small_vector(n=np.array(9), a=np.array(3)))
    print(nested(n=np.array(6), a=np.array(2)))
