"""Lists and dicts a staged loop changes, seen through every name for them (SPEC
§5): a loop that changes a dict or list in place updates the object it had before
the loop, so another variable bound to that object sees the change, as in Python;
one that binds the name to a new object leaves the other name's object as it was.
A dict that gains a key inside the loop has it after the loop (the loop runs at
least once here; with zero iterations the run stops with a KeyError, as AutoGraph's
does, tests/autograph/composite_names_in_control_flow.py).
"""
import stagegraph as sg

# e2e: N=1,4 range.n=1,6 runs=4


@sg.function
def dict_alias(n: sg.i64, xs: sg.f32["N"]):
    stats = {"sum": sg.zeros_like(xs), "count": 0}
    view = stats
    for i in range(n):
        view["sum"] = view["sum"] + xs * i
        view["count"] += 1
    return stats["sum"], stats["count"]


@sg.function
def list_alias(n: sg.i64, xs: sg.f32["N"]):
    acc = [xs * 0.0, xs]
    same = acc
    k = 0
    while k < n:
        same[0] = same[0] + same[1]
        k += 1
    return acc[0]


@sg.function
def rebound(n: sg.i64, xs: sg.f32["N"]):
    before = {"v": xs}
    d = before
    for i in range(n):
        d = {"v": d["v"] * 2.0}
    return before["v"], d["v"]


@sg.function
def gains_keys(n: sg.i64, xs: sg.f32["N"]):
    seen = {}
    total = xs * 0.0
    for i in range(n):
        total = total + xs
        seen["last"] = total
        seen["steps"] = i + 1
    return seen["last"] * 0.5, seen["steps"]


if __name__ == "__main__":
    import numpy as np

    print(dict_alias(n=np.array(3), xs=np.arange(3, dtype=np.float32)))
    print(gains_keys(n=np.array(2), xs=np.arange(3, dtype=np.float32)))
