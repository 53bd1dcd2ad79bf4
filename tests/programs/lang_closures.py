"""Lambdas and closures: a lambda passed to a helper, nested defs closing over
the enclosing function's variables (read when called, as Python does),
`nonlocal` rebinding one, `global` naming module constants, and `del`.
"""
import stagegraph as sg

# e2e: N=1,5 range.n=0,5 runs=3

SCALE = 2.0


def apply_twice(f, x):
    return f(f(x))


def make_affine(a, b):
    return lambda v: v * a + b


def set_scale(s):
    global SCALE
    SCALE = s


@sg.function
def lambdas(x: sg.f32["N"]):
    square = lambda v: v * v  # noqa: E731
    shift = make_affine(0.5, 1.0)
    pick = sorted_pair = lambda a, b=1.0: (a, b)  # noqa: E731
    lo, hi = pick(x.min())
    del sorted_pair
    return apply_twice(square, x), shift(x), apply_twice(lambda v: v + hi, x) * lo


@sg.function
def closures(x: sg.f32["N"], n: sg.i64):
    total = x.sum()
    factor = 3.0

    def scaled(v):
        return v * factor + total          # reads the enclosing variables when called

    first = scaled(x)
    factor = 0.5                            # late binding: the next call sees 0.5
    second = scaled(x)

    count = 0

    def bump(k):
        nonlocal count
        count = count + k

    bump(2)
    bump(3)
    acc = x
    for i in range(n):                      # a closure called inside a staged loop
        acc = scaled(acc)
    return first, second, count, acc


@sg.function
def globals_and_del(x: sg.f32["N"]):
    set_scale(3.0)
    y = x * SCALE
    tmp = y + 1.0
    z = tmp * 2.0
    del tmp
    tmp = z - 1.0                           # rebound after del
    return y, tmp


if __name__ == "__main__":
    import numpy as np

    v = np.arange(3, dtype=np.float32)
    print(lambdas(v))
    print(closures(v, np.int64(2)))
    print(globals_and_del(v))
