"""Mutual recursion without return annotations (SPEC §6): the result types are
inferred from the paths that return without recursing. `halve` and `shift`
call each other on a staged count and keep the shape of their argument, a
tensor with a symbolic first dim, so their result is [N, 3] like `x`; `drop`
and `keep` take one row off per level, so the first dim of their argument is
widened to a symbolic one and their result's first dim is a new symbol."""
import stagegraph as sg

# e2e: N=1,4 range.n=0,6 runs=3


def halve(x, n):
    if n <= 0:
        return x
    return shift(x * 0.5, n - 1) + 1.0


def shift(x, n):
    if n <= 0:
        y = x * 2.0
    else:
        y = halve(x, n - 1) - x * 0.25
    return y


def drop(x, n):
    """Drops up to n rows (never the last one), alternating with keep."""
    if n <= 0:
        return x
    if x.shape[0] <= 1:
        return x
    return keep(x[1:], n - 1)


def keep(x, n):
    if n <= 0:
        return x * 2.0
    return drop(x, n - 1) + 1.0


@sg.function
def same_shape(x: sg.f32["N", 3], n: sg.i64):
    y = halve(x, n)
    return y, y + x


@sg.function
def fewer_rows(x: sg.f32["N", 3], n: sg.i64):
    return drop(x, n), sg.sum(keep(x, n), axis=0)


if __name__ == "__main__":
    import numpy as np

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    print(same_shape(x=x, n=np.array(3, np.int64)))
    print(fewer_rows(x=x, n=np.array(5, np.int64)))
