"""Lists and dicts that exist before a staged `if` and change inside a branch: an
item assigned on one path or both, an append on both paths (the same length
after either), a dict entry replaced, a list reached through a dict, a second
name for the same list, nested staged ifs, and a staged if inside a staged loop
that keeps the best value and its index in a list.
"""
import stagegraph as sg

# e2e: N=1,5 range.k=-3,4 runs=4


@sg.function
def assign_items(x: sg.f32["N", 4]):
    outs = [x[0], x[-1]]
    if sg.sum(x) > 0.0:
        outs[0] = outs[0] * 2.0
    else:
        outs[1] = outs[1] + 1.0
    return outs[0] + outs[1]


@sg.function
def append_both(x: sg.f32["N", 4]):
    parts = [x[0]]
    if sg.max(x) > 0.5:
        parts.append(x[0] * 3.0)
    else:
        parts.append(sg.zeros([4]))
    return sg.stack(parts)


@sg.function
def dict_entry(x: sg.f32["N", 4], k: sg.i64):
    state = {"h": x[0], "count": 0}
    if k > 0:
        state["h"] = sg.tanh(state["h"])
        state["count"] = k
    return state["h"], state["count"]


@sg.function
def list_in_dict(x: sg.f32["N", 4], k: sg.i64):
    d = {"xs": [x[0], x[0]]}
    if k > 1:
        d["xs"][1] = x[0] - 1.0
    return d["xs"][0] + d["xs"][1]


@sg.function
def alias(x: sg.f32["N", 4], k: sg.i64):
    a = [x[0]]
    b = a
    if k < 0:
        b[0] = -x[0]
    return a[0]


@sg.function
def nested_ifs(x: sg.f32["N", 4], k: sg.i64):
    outs = [x[0], x[0]]
    if k > 0:
        if k > 2:
            outs[0] = x[0] * 10.0
        else:
            outs[1] = x[0] * 100.0
    else:
        outs[0] = outs[0] - 5.0
    return outs[0], outs[1]


@sg.function
def best_row(x: sg.f32["N", 4]):
    best = [sg.sum(x[0]), 0]
    for i in range(x.shape[0]):
        s = sg.sum(x[i])
        if s > best[0]:
            best[0] = s
            best[1] = i
    return best[0], best[1]
