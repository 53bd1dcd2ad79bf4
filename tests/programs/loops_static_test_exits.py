"""While loops whose test is static (`j < 3` with j a Python int) but which leave
by a break or return known only at run time. They become While nodes from the
start: unrolled, the first run-time break would make the test's variables staged
at its second check. Nested in a staged loop (with a break, with a return), with
both exits, one that ends by its static test or by a return, in an inlined
function called twice, and in each iteration of an unrolled loop.
"""
import stagegraph as sg

# e2e: N=1,5 runs=3


@sg.function
def nested_break(x: sg.f32["N"]):
    count = 0
    i = 0
    while i < x.shape[0]:
        j = 0
        while j < 3:
            if x[i] * j > 1.0:
                break
            count += 1
            j += 1
        if count > 6:
            break
        i += 1
    return count, i


@sg.function
def first_positive(x: sg.f32[4]):
    k = 0
    while k < 4:
        if x[k] > 0.5:
            return x[k], k
        k += 1
    return x[0], -1


@sg.function
def both_exits(x: sg.f32["N"], limit: sg.f32):
    total = sg.zeros(())
    steps = 0
    while steps < 8:
        total = total + x[steps % x.shape[0]]
        if total > limit:
            return total, steps
        if total < -limit:
            break
        steps += 1
    return -total, steps


@sg.function
def inner_return(x: sg.f32["N"]):
    i = 0
    while i < x.shape[0]:
        j = 0
        while j < 3:
            if x[i] * j > 2.0:
                return i * 10 + j
            j += 1
        i += 1
    return -1


def find(x, t):
    k = 0
    while k < 2:
        if x[k % x.shape[0]] > t:
            return k
        k += 1
    return 5


@sg.function
def inlined(x: sg.f32["N"], t: sg.f32):
    return find(x, t) + find(x * 2.0, t)


@sg.function
def in_unrolled_loop(x: sg.f32["N"]):
    total = sg.zeros(())
    for r in range(2):
        j = 0
        while j < 3:
            if x[0] > j + r:
                break
            total = total + 1.0
            j += 1
    return total


if __name__ == "__main__":
    import numpy as np
    x = np.array([0.2, 0.9, -0.3, 1.4, 0.1], np.float32)
    print(nested_break(x=x))
    print(first_positive(x=x[:4]))
    print(both_exits(x=x, limit=np.float32(1.0)))
