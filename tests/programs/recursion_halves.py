"""Divide and conquer over a tensor split in halves (SPEC §6): each level's
argument has a different shape, so the recursive call widens the
specialisation's dim to a symbolic one (once) and the sizes become staged."""
import stagegraph as sg

# e2e: N=1,3,7


def rsum(x):
    n = x.shape[0]
    if n == 1:
        r = x[0]
    else:
        half = n // 2
        r = rsum(x[:half]) + rsum(x[half:])
    return r


@sg.function
def halves(x: sg.f32[8], y: sg.f32["N"]):
    return rsum(x), rsum(y), rsum(y * 2.0)


if __name__ == "__main__":
    import numpy as np

    print(halves(x=np.arange(8, dtype=np.float32), y=np.ones(5, np.float32)))
