"""Comparisons, bool logic and casts."""
import stagegraph as sg

# e2e: N=1,3 range.k=-2,5


@sg.function
def classify(x: sg.f32["N", 5], t: sg.f32[5], k: sg.i32["N", 5]):
    above = x > t
    eq = k == 2
    ne = k != 0
    both = above & ne
    either = above | eq
    neither = ~either
    count = sg.sum(both.astype(sg.i32), axis=1)        # i64
    kept = sg.where(above, x, t)
    as_int = sg.astype(sg.floor(x * 3.0), sg.i32)
    back = k.astype(sg.f32) / 2
    small = sg.logical_and(x >= 0.0, k < 3)
    return above, neither, count, kept, as_int, back, small, (x <= 0.5).astype(sg.i64)


@sg.function
def to_bool(v: sg.f32[6], n: sg.i64[6]):
    return v.astype(sg.bool), n.astype(sg.bool), n.astype(sg.i32), sg.logical_not(n > 1)


@sg.function
def chained(x: sg.f32[5], k: sg.i32["N", 5]):
    # Chained comparisons of staged scalars are `and`s, each operand evaluated once.
    a = x[0]
    b = k[0, 1]
    inside = 0.0 < a < 1.0
    three = -2 <= b < 3 != b
    mixed = a < 2.0 < 3.0
    never = a < 3.0 < 2.0
    c = x[1]
    return inside, three, mixed, never, sg.where(-1.0 < a <= c, a, c)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(4)
    out = classify(x=rng.standard_normal((2, 5)).astype(np.float32), t=np.zeros(5, np.float32),
                   k=np.arange(10, dtype=np.int32).reshape(2, 5) % 4)
    print(out[2], out[4])
