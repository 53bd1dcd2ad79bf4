"""Loops that run zero times keep the initial values (SPEC §5)."""
import stagegraph as sg

# e2e: N=0,3 range.n=-2,2 runs=4


@sg.function
def zero_trip(x: sg.f32["N"], n: sg.i64):
    total = sg.ones(())
    for row in x:
        total = total * row
    i = 0
    while i < n:
        total = total + 1.0
        i += 1
    for j in range(n, 0):
        total = total - 0.5
    return total, i


if __name__ == "__main__":
    import numpy as np

    print(zero_trip(x=np.zeros(0, np.float32), n=np.array(-1)))
