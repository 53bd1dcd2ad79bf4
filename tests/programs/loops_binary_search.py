"""Binary search over a tensor of symbolic length (SPEC §5); the data need not
be sorted for the graph to agree with eager mode."""
import stagegraph as sg

# e2e: N=1,9 range.target=-3,12 runs=4


@sg.function
def search(target: sg.i64, xs: sg.i64["N"]):
    lo = 0
    hi = len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    found = lo < len(xs) and xs[lo] == target
    return lo, found


if __name__ == "__main__":
    import numpy as np

    print(search(target=np.array(6), xs=np.arange(8, dtype=np.int64) * 2))
