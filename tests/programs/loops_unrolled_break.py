"""A loop unrolled at compile time whose break depends on a run-time value:
each later iteration runs under an If on the break flag (SPEC §5)."""
import stagegraph as sg

# e2e: runs=4


@sg.function
def first_negative(x: sg.f32[5]):
    index = -1
    for k in range(5):
        if x[k] < 0.0:
            index = k
            break
    return index


@sg.function
def guarded_sum(x: sg.f32[4]):
    total = sg.zeros(())
    for k in range(4):
        if x[k] > 1.5:
            continue
        total = total + x[k]
    return total


if __name__ == "__main__":
    import numpy as np

    print(first_negative(x=np.array([1.0, 2.0, -1.0, 3.0, -2.0], np.float32)))
