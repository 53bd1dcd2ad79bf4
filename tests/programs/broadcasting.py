"""Broadcasting of row and column vectors, and Python numbers mixed with f32, i32
and bool tensors (SPEC §3's dtype rules)."""
import stagegraph as sg

# e2e: N=1,3


@sg.function
def affine(x: sg.f32["N", 4], row: sg.f32[1, 4], col: sg.f32["N", 1], s: sg.f32):
    return x * row + col - s


@sg.function
def outer(u: sg.f32[5], v: sg.f32[3]):
    return u[:, None] * v[None, :] + v          # [5, 3]


@sg.function
def mixed(x: sg.f32[3, 4], i: sg.i32[3, 4], b: sg.bool[4]):
    a = x * 2 + 1.5            # f32
    c = i * 3 - 1              # i32
    d = i / 2                  # int / int -> f32
    e = i + 0.5                # int tensor with a float -> f32
    f = b + 1                  # bool tensor with an int -> i64
    g = i // 3                 # floor division, negative values included
    h = i % 3                  # Python's sign convention
    k = -x / 4.0 + i.astype(sg.f32)
    return a, c, d, e, f, g, h, k


if __name__ == "__main__":
    import numpy as np

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    b = np.array([True, False, True, False])
    for out in mixed(x=x, i=i, b=b):
        print(out.dtype, out.shape)
