"""Recursive functions that return Python numbers on every path (`return 0`,
`return 1 + depth(n - 1)`): in eager mode the result is a Python int or float, so
beside a tensor it takes the tensor's dtype (NEP 50), in the graph as in eager
mode: an f32 tensor times an int result, an f16 tensor times a float one, and an
i32 tensor plus a count that a run-time index walks through. Also a recursion
through a static argument behind a staged branch, 40 levels deep, which staging
runs once per level."""
import stagegraph as sg

# e2e: N=1,6 range.start=0,1 runs=4


def depth(n):
    if n <= 0:
        return 0
    return 1 + depth(n - 1)


def halves(n):
    if n <= 0:
        return 0.0
    return 0.5 + halves(n - 1)


def count_positive(x, i):
    if i >= x.shape[0]:
        return 0
    if x[i] > 0:
        return 1 + count_positive(x, i + 1)
    return count_positive(x, i + 1)


def doubled(x, i):
    if sg.max(x) > 1000.0:
        return x
    if i == 0:
        return x
    return doubled(x * 1.25, i - 1)


@sg.function
def numbers(x: sg.f32["N"], h: sg.f16["N"], y: sg.i32["N"], start: sg.i64):
    d = depth(x.shape[0])
    return x * d, h * halves(x.shape[0]), y + count_positive(x, start), d, doubled(x, 40)
