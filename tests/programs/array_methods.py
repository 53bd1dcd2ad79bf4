"""NumPy's array methods for ops of the library (x.sum(axis=0), x.max(), x.argmax(1),
x.clip(0, 1), x.dot(w), x.transpose(1, 0), x.flatten(), ...), compiled as the sg
functions they stand for, beside dot of a matrix with a stack of matrices and a
softmax over two axes.
"""
import stagegraph as sg

# e2e: N=1,3


@sg.function
def reductions(x: sg.f32["N", 4]):
    return {
        "sum0": x.sum(axis=0),
        "mean": x.mean(),
        "max1": x.max(axis=1, keepdims=True),
        "min": x.min(),
        "prod": (x * 0.5 + 1.0).prod(axis=-1),
        "any": (x > 1.0).any(axis=1),
        "all": (x > -3.0).all(),
        "argmax": x.argmax(axis=1),
        "argmin": x.argmin(),
        "cumsum": x.cumsum(axis=1),
    }


@sg.function
def reshaping(x: sg.f32["N", 4], w: sg.f32[4, 3]):
    return {
        "t": x.transpose(1, 0),
        "t_tuple": x.transpose((1, 0)),
        "flat": x.flatten(),
        "squeezed": x[:, None, :].squeeze(1),
        "dot": x.dot(w),
        "clip": x.clip(-0.5, 0.5),
        "clip_min": x.clip(min=0.0),
        "round": (x * 3.0).round(),
        "size": x[:1].size * x,
        "head": x[:2].shape[0] * x[:2],
    }


@sg.function
def stacks(x: sg.f32["N", 4], ws: sg.f32[2, 4, 3]):
    return sg.dot(x, ws), sg.softmax(x[:, :, None] * ws[0][None, :, :], axis=(1, 2))
