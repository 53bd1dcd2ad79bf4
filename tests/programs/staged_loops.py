"""Staged loops, recursion and conditional expressions: a for over a symbolic dim,
a while with a run-time bound, a recursive function compiled to Call nodes, and
short-circuit `and` / `x if c else y` on run-time values (SPEC §5, §6)."""
import stagegraph as sg

# e2e: T=1,4 range.n=0,7 range.i=-2,8 scale.W=0.5 scale.U=0.3 runs=3


@sg.function
def rnn(xs: sg.f32["T", 4], h0: sg.f32[6], W: sg.f32[4, 6], U: sg.f32[6, 6]):
    h = h0
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
    return h


@sg.function
def sum_of_squares(n: sg.i64):
    total = sg.zeros((), dtype=sg.i64)
    i = n
    while i > 0:
        total = total + i * i
        i = i - 1
    return total


@sg.function
def factorial(n: sg.i64):
    if n <= 1:
        return sg.ones((), dtype=sg.i64)
    return n * factorial(n - 1)


@sg.function
def guarded(x: sg.f32[6], i: sg.i64):
    # x[i] is evaluated only when i is in range: the untaken side never runs.
    inside = i >= 0 and i < 6
    picked = x[i] if inside else sg.zeros(())
    return picked * 2.0 if picked > 0.0 else -picked, inside


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(7)
    print(rnn(xs=rng.standard_normal((3, 4)).astype(np.float32), h0=np.zeros(6, np.float32),
              W=rng.standard_normal((4, 6)).astype(np.float32), U=rng.standard_normal((6, 6)).astype(np.float32)))
    print(sum_of_squares(n=np.array(4)), factorial(n=np.array(5)))
    print(guarded(x=np.arange(6, dtype=np.float32) - 2, i=np.array(7)))
