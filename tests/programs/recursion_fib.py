"""Recursion with a staged argument (SPEC §6): fib(n) for a run-time n is a graph
function that calls itself through Call nodes; fib(10) with a static argument is
evaluated at compile time. The result type is inferred (no annotation)."""
import stagegraph as sg

# e2e: range.n=0,13 runs=5


def fib(n):
    if n < 2:
        r = n
    else:
        r = fib(n - 1) + fib(n - 2)
    return r


@sg.function
def main(n: sg.i64):
    return fib(n), fib(10)


if __name__ == "__main__":
    import numpy as np

    print(main(n=np.array(12, np.int64)))
