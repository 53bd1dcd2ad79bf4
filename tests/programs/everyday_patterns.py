"""Everyday patterns: nested defs with defaults, augmented assignment, slicing, staged
indices, builtins on tensors, casts (softmax of ints), dict results, returns from both branches,
bool masks, a staged power loop, recursion over a shrinking slice, a variable
assigned on every path but one that returns, the builtins sum,
any and all over lists of staged values, and f-strings (output names, print).
"""
import stagegraph as sg

# e2e: N=1,4 range.i=0,4 range.n=0,4 runs=4


@sg.function
def nested_fn(x: sg.f32["N"]):
    def scale(v, k=2.0):
        return v * k
    return scale(x), scale(x, k=3.0)

@sg.function
def aug(x: sg.f32["N", 3]):
    y = x
    y *= 2
    y -= 1
    y /= 4
    return y

@sg.function
def slicing(x: sg.f32["N", 5]):
    return x[:, 1:4], x[..., -1], x[::-1], x[:, None, :2]

@sg.function
def staged_idx(x: sg.f32["N", 5], i: sg.i64):
    j = i % x.shape[0]
    return x[j], x[:, i], x[j, i % 5]

@sg.function
def minmax_builtin(x: sg.f32["N"]):
    return max(sg.max(x), 0.0), min(sg.min(x), 1.0), abs(sg.sum(x))

@sg.function
def casting(x: sg.f32["N"]):
    y = x.astype(sg.i32)
    z = sg.astype(y, sg.f16)
    # softmax of ints (and of bools) is of their f32 values, as exp is.
    return y, z, (x > 0).astype(sg.f32), sg.softmax(y), sg.log_softmax(x > 0)

@sg.function
def dict_ret(x: sg.f32["N"]):
    return {"mean": sg.mean(x), "std": sg.sqrt(sg.mean((x - sg.mean(x)) ** 2))}

@sg.function
def early(x: sg.f32["N"]):
    if sg.sum(x) > 0:
        return x
    else:
        return -x

@sg.function
def bool_ops(x: sg.f32["N"]):
    m = (x > 0) & (x < 1)
    return sg.any(m), sg.all(~m), sg.logical_or(m, x > 5)

@sg.function
def power(x: sg.f32["N"], n: sg.i64):
    r = sg.ones_like(x)
    for _ in range(n):
        r = r * x
    return r

@sg.function
def recursion_sum(x: sg.f32["N"]) -> sg.f32:
    if x.shape[0] == 0:
        return 0.0
    return x[0] + recursion_sum(x[1:])


@sg.function
def elif_return(x: sg.f32["N"], i: sg.i64):
    if i == 0:
        y = x
    elif i == 1:
        y = x * 2.0
    elif i == 2:
        return x * 3.0
    else:
        y = -x
    return y + 1.0


@sg.function
def builtins_over_lists(x: sg.f32["N", 3], i: sg.i64):
    cols = [x[:, 0], x[:, 1], x[:, 2]]
    rows = sum(x[:, :2].T)       # over the rows of a static first dim
    tests = [sg.sum(x) > 0.0, i > 1]
    both = all(tests)
    either = any(tests + [False])
    return sum(cols), sum(cols, 1.0), rows, sg.where(both, 1, 0), sg.where(either, 1, 0), any([i > 2, True])


@sg.function
def fstring_names(x: sg.f32["N", 3]):
    out = {}
    for i in range(3):
        out[f"col{i}_x{i + 1:02d}"] = x[:, i] * float(i + 1)
    print(f"total {sg.sum(x)} over {x.shape[0]} rows")
    return out
