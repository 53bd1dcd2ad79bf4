"""sg.range is always a While node, also over static bounds (SPEC §5)."""
import stagegraph as sg

# e2e: range.n=0,6 runs=3


@sg.function
def powers(x: sg.f32[3], n: sg.i64):
    y = x
    for k in sg.range(4):
        y = y * x + k.astype(sg.f32)
    z = sg.zeros((3,))
    for k in sg.range(1, n):
        z = z + k.astype(sg.f32)
    return y, z


if __name__ == "__main__":
    import numpy as np

    print(powers(x=np.array([1.0, 0.5, -1.0], np.float32), n=np.array(4)))
