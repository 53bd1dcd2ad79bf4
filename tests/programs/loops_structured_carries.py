"""Tuples, lists and dicts of tensors carried by staged loops: one carried value
per item, the container rebuilt around them in the body, the test and after the
loop. A tuple state unpacked and rebuilt, list items assigned at static indices,
a dict of running statistics, and a nested tuple that starts from Python numbers.
"""
import stagegraph as sg

# e2e: N=1,6 range.n=0,12 runs=4


@sg.function
def fib_state(n: sg.i64):
    state = (sg.zeros((), dtype=sg.i64), sg.ones((), dtype=sg.i64))
    i = 0
    while i < n:
        a, b = state
        state = (b, a + b)
        i += 1
    return state[0], state[1]


@sg.function
def moments(x: sg.f32["N"]):
    sums = [sg.zeros(()), sg.zeros(())]
    for i in range(x.shape[0]):
        sums[0] = sums[0] + x[i]
        sums[1] = sums[1] + x[i] * x[i]
    return sums[0], sums[1]


@sg.function
def running_stats(x: sg.f32["N"]):
    stats = {"count": 0, "total": 0.0, "peak": x[0]}
    for v in x:
        stats = {"count": stats["count"] + 1, "total": stats["total"] + v,
                 "peak": sg.maximum(stats["peak"], v)}
    return stats


@sg.function
def nested(n: sg.i64):
    acc = ((0, 1.0), 2)
    i = 0
    while i < n:
        (a, b), c = acc
        acc = ((a + c, b * 0.5), c + 1)
        i += 1
    return acc[0][0], acc[0][1], acc[1]
