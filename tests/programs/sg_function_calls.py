"""An @sg.function called from another with staged arguments (SPEC §6) is a
graph function per specialisation, called through a Call node; with static
arguments only it runs at compile time."""
import stagegraph as sg

# e2e: runs=2


@sg.function
def scale(x: sg.f32["N"], k: sg.f32):
    return x * k


@sg.function
def affine(x: sg.f32["N"], k: sg.f32, b: sg.f32["N"]):
    return scale(x, k) + scale(b, 2.0) + scale(b, 2.0) + scale(sg.ones((3,)), 4.0)[0]


if __name__ == "__main__":
    import numpy as np

    print(affine(x=np.ones(3, np.float32), k=np.array(2.0, np.float32), b=np.arange(3, dtype=np.float32)))
