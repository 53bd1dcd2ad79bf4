"""break and return together inside nested staged loops (SPEC §5)."""
import stagegraph as sg

# e2e: R=1,4 C=2,3 range.target=-2,3 runs=4


@sg.function
def locate(m: sg.i64["R", "C"], target: sg.i64):
    for r in range(m.shape[0]):
        for c in range(m.shape[1]):
            if m[r, c] == target:
                return r * 100 + c
    return -1


@sg.function
def count_until(m: sg.i64["R", "C"], target: sg.i64):
    hits = 0
    r = 0
    while r < m.shape[0]:
        c = 0
        while c < m.shape[1]:
            if m[r, c] == target:
                break
            hits += 1
            c += 1
        r += 1
    return hits


if __name__ == "__main__":
    import numpy as np

    print(locate(m=np.array([[1, 2], [3, 4]], np.int64), target=np.array(3)))
    print(count_until(m=np.array([[1, 2], [3, 4]], np.int64), target=np.array(3)))
