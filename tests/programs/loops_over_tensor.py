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


if __name__ == "__main__":
    import numpy as np

    print(row_norms(x=np.ones((2, 4), np.float32), w=np.ones((3, 4), np.float32)))
