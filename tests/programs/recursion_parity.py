"""Mutual recursion (SPEC §6): is_even and is_odd call each other with a staged
count; both become graph functions calling each other through Call nodes. The
bool result type is inferred."""
import stagegraph as sg

# e2e: range.n=0,40 runs=6


def is_even(n):
    if n == 0:
        r = n == 0
    else:
        r = is_odd(n - 1)
    return r


def is_odd(n):
    if n == 0:
        r = n != 0
    else:
        r = is_even(n - 1)
    return r


@sg.function
def parity(n: sg.i64):
    return is_even(n), is_odd(n + 1)


if __name__ == "__main__":
    import numpy as np

    print(parity(n=np.array(7, np.int64)))
