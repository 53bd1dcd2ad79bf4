"""raise and try, decided by staging: a raise under a staged test becomes a
run-time check (the path that raises stops the run with the message), with
the other branch's values flowing on; a raise under a static test that does
not fire, try/except/else/finally that staging decides at compile time, and a
program's own exception class.
"""
import stagegraph as sg

# e2e: N=1,5 range.n=0,6 runs=3


class ShapeError(ValueError):
    pass


def check_rank(x, rank):
    if x.ndim != rank:
        raise ShapeError(f"expected rank {rank}, got {x.ndim}")
    return x


def safe_log(x, strict):
    try:
        if strict:
            raise ValueError("strict mode")
        y = sg.log(x + 1.0)
    except ValueError as e:
        y = x * 0.0 + len(str(e))
    else:
        y = y + 1.0
    finally:
        y = y * 2.0
    return y


@sg.function
def staged_raise(x: sg.f32["N"], n: sg.i64):
    x = check_rank(x, 1)
    if n < 0:
        raise ValueError("n must be non-negative")
    else:
        y = x * n.astype(sg.f32)
    for i in range(n):
        if i > 100:
            raise RuntimeError("too many steps")
        y = y + 1.0
    return y


@sg.function
def compile_time_try(x: sg.f32["N"]):
    a = safe_log(sg.abs(x), strict=False)
    b = safe_log(sg.abs(x), strict=True)
    try:
        check_rank(x, 2)
        c = x
    except (TypeError, ShapeError):
        c = x + 10.0
    return a, b, c


if __name__ == "__main__":
    import numpy as np

    v = np.arange(3, dtype=np.float32)
    print(staged_raise(v, np.int64(2)))
    print(compile_time_try(v))
