"""Reductions with axis, tuple axes, negative axes and keepdims, on floats, ints
and bools (SPEC §3: sum of i32 and bool gives i64, mean of ints gives f32)."""
import stagegraph as sg

# e2e: N=1,3 range.i=-4,5


@sg.function
def float_reductions(x: sg.f32["N", 3, 4]):
    return {
        "sum0": sg.sum(x, axis=0),
        "sum_last": sg.sum(x, axis=-1, keepdims=True),
        "mean12": sg.mean(x, axis=(1, 2)),
        "max1": sg.max(x, axis=1),
        "min_all": sg.min(x),
        "total": sg.sum(x),
        "argmax": sg.argmax(x, axis=-1),
        "argmin": sg.argmin(x, axis=1),
        "mean_keep": sg.mean(x, axis=-2, keepdims=True),
    }


@sg.function
def int_reductions(i: sg.i32[5, 3], b: sg.bool[5, 3]):
    return (sg.sum(i, axis=0), sg.mean(i, axis=1), sg.max(i, axis=-1), sg.prod(i, axis=1),
            sg.any(b, axis=1), sg.all(b, axis=0), sg.sum(b, axis=-1), sg.sum(i))


if __name__ == "__main__":
    import numpy as np

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for k, v in float_reductions(x=x).items():
        print(k, v.dtype, v.shape)
