"""Short-circuit safety: the right side of `and`/`or` and the untaken arm of a
conditional expression never run, so an out-of-range index there is safe
(SPEC §5)."""
import stagegraph as sg

# e2e: N=3,5 range.i=0,8 runs=6


@sg.function
def safe(x: sg.f32["N"], i: sg.i64):
    n = len(x)
    inside = i < n and x[i] > 0.0
    outside = i >= n or x[i] < 0.0
    value = x[i] if i < n else x[0]
    both = not inside and i < n
    return inside, outside, value, both


@sg.function
def scan(x: sg.f32["N"]):
    i = 0
    while i < len(x) and x[i] >= 0.0:
        i += 1
    return i


if __name__ == "__main__":
    import numpy as np

    print(safe(x=np.array([1.0, -1.0, 2.0], np.float32), i=np.array(3)))
    print(scan(x=np.array([1.0, 2.0, 3.0], np.float32)))
