"""Python numbers chosen by a staged `if` (`k = 1` in one branch, `k = 2` in the
other, or a conditional expression): in eager mode `k` is a Python int or float on
either path, so beside a tensor it takes the tensor's dtype (NEP 50), in the graph
as in eager mode: f32 and f16 tensors times an int and a float, an i32 tensor, a
number from the branch before its use, and a branch in each iteration of a loop.
"""
import stagegraph as sg

# e2e: N=1,5 runs=3


@sg.function
def branch_numbers(x: sg.f32["N"]):
    if x[0] > 0:
        k = 1
    else:
        k = 2
    return x * k


@sg.function
def branch_floats(x: sg.f16["N"]):
    if x[0] > 0:
        k = 1.5
    else:
        k = 2.0
    return x * k


@sg.function
def branch_mixed(x: sg.f32["N"], y: sg.i32["N"]):
    k = 0
    if x[0] > 0:
        k = k + 3
    return y * k


@sg.function
def ternary(x: sg.f32["N"]):
    k = 3 if x[0] > 0 else 4
    return x * k


@sg.function
def branch_in_loop(x: sg.f32["N"]):
    s = sg.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            w = 2
        else:
            w = -1
        s = s + x * w
    return s
