"""Recursion and staged loops together (SPEC §5, §6): a recursive call inside a
staged while loop, a staged while loop inside a recursive function, early
returns from a staged loop inside a recursive function, and the early-return
form of Fibonacci (`if n < 2: return n`). `find_from` keeps a return
annotation, which gives its result type instead of inference."""
import stagegraph as sg

# e2e: range.n=0,9 N=4,9 range.limit=0.5,2 runs=3


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def tri(n):
    if n <= 0:
        r = n * 0
    else:
        s = n * 0
        i = n * 0
        while i < n:
            s = s + i
            i = i + 1
        r = s + tri(n - 1)
    return r


def find_from(xs, start, limit) -> sg.i64:
    """The index of the first element >= limit at or after start (-1: none),
    scanning two elements per call."""
    i = start
    while i < start + 2:
        if i >= xs.shape[0]:
            return i * 0 - 1
        if xs[i] >= limit:
            return i
        i = i + 1
    return find_from(xs, start + 2, limit)


@sg.function
def loops(n: sg.i64, xs: sg.f32["N"], limit: sg.f32):
    total = n * 0
    k = n * 0
    while k < n:
        total = total + fib(k)
        k = k + 1
    return total, fib(n), tri(n), find_from(xs, n * 0, limit)


if __name__ == "__main__":
    import numpy as np

    print(loops(n=np.array(7, np.int64), xs=np.linspace(0, 2, 6).astype(np.float32), limit=np.array(1.1, np.float32)))
