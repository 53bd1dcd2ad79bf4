"""A helper with an early return from a staged while, inlined inside a staged
for loop (SPEC §5, §6)."""
import stagegraph as sg

# e2e: N=1,5 range.n=0,4 runs=3


def first_positive(x, n):
    i = 0
    while i < n:
        if x[i] > 0.0:
            return x[i]
        i += 1
    return x[0] * 0.0


@sg.function
def accumulate(x: sg.f32["N"], n: sg.i64):
    total = sg.zeros(())
    for k in range(n):
        total = total * 0.5 + first_positive(x - sg.astype(k, sg.f32) if k > 0 else x, len(x))
    return total


if __name__ == "__main__":
    import numpy as np

    print(accumulate(x=np.array([-1.0, 2.0, 0.5], np.float32), n=np.array(3)))
