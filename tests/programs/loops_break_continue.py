"""break and continue in a for over a symbolic range (SPEC §5)."""
import stagegraph as sg

# e2e: N=1,7 runs=3


@sg.function
def positive_prefix_sum(x: sg.f32["N"]):
    total = sg.zeros(())
    count = 0
    for i in range(len(x)):
        if x[i] < -1.0:
            break
        if x[i] < 0.0:
            continue
        total = total + x[i]
        count += 1
    return total, count


@sg.function
def skip_odd_until(x: sg.i64["N"]):
    out = sg.zeros((), dtype=sg.i64)
    for i in range(x.shape[0]):
        if i % 2 == 1:
            continue
        out = out + x[i]
        if out > 10:
            break
    return out


if __name__ == "__main__":
    import numpy as np

    print(positive_prefix_sum(x=np.array([1.0, -0.5, 2.0, -3.0, 4.0], np.float32)))
    print(skip_odd_until(x=np.array([3, 1, 4, 1, 5, 9], np.int64)))
