"""for over a tensor: a While over a symbolic first dim, unrolled over a static
one (SPEC §5)."""
import stagegraph as sg

# e2e: B=1,4 runs=2


@sg.function
def row_norms(x: sg.f32["B", 4], w: sg.f32[3, 4]):
    best = sg.zeros(())
    for row in x:
        best = sg.maximum(best, sg.sqrt(sg.sum(row * row)))
    acc = sg.zeros((4,))
    for r in w:
        acc = acc + r
    return best, acc


@sg.function
def weighted_rows(x: sg.f32["B", 4], w: sg.f32[3, 4]):
    # enumerate over a symbolic first dim (a While with the index) and a static one.
    acc = sg.zeros((4,))
    last = sg.zeros((), dtype=sg.i64)
    for i, row in enumerate(x):
        acc = acc + row * sg.astype(i, sg.f32)
        last = i
    tail = sg.zeros(())
    for k, row in enumerate(x, start=10):
        tail = tail + sg.sum(row) * sg.astype(k, sg.f32)
    total = sg.zeros((4,))
    for j, r in enumerate(w):
        total = total + r * float(j + 1)
    return acc, last, tail, total


if __name__ == "__main__":
    import numpy as np

    print(row_norms(x=np.ones((2, 4), np.float32), w=np.ones((3, 4), np.float32)))
