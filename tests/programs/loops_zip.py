"""`for a, b in zip(x, y)` over tensors whose first dims are known only at run
time: a While node over a counter up to the shortest first dim, each target
indexed by it. Equal dims, different dims (zip stops at the shorter), three
tensors, rows of a matrix beside a vector, a static tensor beside a symbolic one,
and static lists beside them (of Python floats, a range of ints, tensors), which
become tensors indexed the same way; each number still takes its partner's dtype.
"""
import stagegraph as sg

# e2e: N=1,5 M=2,4 runs=3


@sg.function
def dot(x: sg.f32["N"], y: sg.f32["N"]):
    total = 0.0
    for a, b in zip(x, y):
        total = total + a * b
    return total


@sg.function
def shorter(x: sg.f32["N"], y: sg.f32["M"]):
    out = sg.zeros(())
    count = 0
    for a, b in zip(x, y):
        out = out + sg.maximum(a, b)
        count += 1
    return out, count


@sg.function
def three(x: sg.f32["N"], y: sg.f32["N"], m: sg.f32["N", 3]):
    acc = sg.zeros((3,))
    for a, b, row in zip(x, y, m):
        acc = acc + row * (a - b)
    return acc


@sg.function
def with_static(x: sg.f32["N"]):
    w = sg.arange(4) * 0.5
    total = 0.0
    for a, b in zip(x, w):
        total = total + a * b
    return total


@sg.function
def with_float_list(x: sg.f32["M", 4]):
    t = sg.zeros([4])
    for w, row in zip([0.5, 2.0, -1.0], x):
        t = t + w * row
    return t


@sg.function
def with_range(x: sg.i32["N"]):
    total = sg.zeros((), dtype=sg.i32)
    for k, v in zip(range(2, 6), x):
        total = total + v * k
    return total


@sg.function
def with_tensor_list(x: sg.f32["N", 4], a: sg.f32[4]):
    t = sg.zeros([4])
    for v, row in zip([a, a * 2.0, -a], x):
        t = t + v * row
    return t
