"""`for a, b in zip(x, y)` over tensors whose first dims are known only at run
time: a While node over a counter up to the shortest first dim, each target
indexed by it. Equal dims, different dims (zip stops at the shorter), three
tensors, rows of a matrix beside a vector, and a static tensor beside a symbolic one.
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
