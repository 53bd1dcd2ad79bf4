"""Early return from inside a staged while, and from a staged `if` followed by
more code (SPEC §5: return lowered to flags)."""
import stagegraph as sg

# e2e: N=1,6 range.limit=-3,3 runs=4


@sg.function
def first_above(x: sg.f32["N"], limit: sg.f32):
    i = 0
    while i < x.shape[0]:
        if x[i] > limit:
            return i
        i += 1
    return -1


@sg.function
def clamp_sign(v: sg.f32, limit: sg.f32):
    if v > limit:
        return limit
    if v < -limit:
        return -limit
    w = v * 2.0
    return w - v


@sg.function
def ordered(v: sg.f32, limit: sg.f32):
    if v > limit:
        return limit, v
    return v, limit


@sg.function
def named(x: sg.f32["N"], limit: sg.f32):
    # A dict returned from staged branches: joined value by value, shapes included.
    if x[0] > limit:
        if x[0] > limit + 1.0:
            return {"part": x * 2.0, "first": x[0]}
        return {"part": x[:1], "first": limit}
    return {"part": -x, "first": x[0] - limit}


@sg.function
def first_negative(x: sg.f32["N"]):
    # A tuple returned from inside a staged for loop.
    for i in range(len(x)):
        if x[i] < 0.0:
            return i, x[i]
    return -1, x[0]


@sg.function
def scan(x: sg.f32["N"], limit: sg.f32):
    # A dict returned from inside a staged while, one value changing shape.
    i = 0
    while i < x.shape[0]:
        if x[i] > limit:
            return {"at": i, "value": x[i], "tail": x[i:] * 2.0}
        i += 1
    return {"at": -1, "value": limit, "tail": x * 0.0}


if __name__ == "__main__":
    import numpy as np

    print(first_above(x=np.array([0.5, 2.0, 3.0], np.float32), limit=np.array(1.0, np.float32)))
    print(clamp_sign(v=np.array(0.5, np.float32), limit=np.array(1.0, np.float32)))
