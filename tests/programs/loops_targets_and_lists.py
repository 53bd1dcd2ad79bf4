"""A for loop's target after the loop, lists and variables across staged early
returns and continues, loop-carried numbers updated with the counter, and a few op
forms: one_hot of a symbolic depth, pad with a run-time value, concatenate with a
list of numbers, a shape read from a tensor's values, dict(key=value) (SPEC §4, §5)."""
import stagegraph as sg

# e2e: N=0,3 C=2,4 range.n=0,6 range.a=-1,5 runs=3


@sg.function
def target_after_loop(x: sg.f32["N"], n: sg.i64):
    # Python's value: the last item, or the value before the loop when it runs zero times.
    i = -1
    for i in range(n):
        pass
    last = sg.zeros(())
    for last in x:
        pass
    k = 7
    for k in range(n):
        k = 3 * k + 1
    return i, last, k


@sg.function
def target_provably_runs(x: sg.f32["N"]):
    # No value before the loop, but the loop runs at least once.
    for i in sg.range(3):
        pass
    for j in range(x.shape[0] + 1):
        pass
    return i, j


@sg.function
def list_after_early_return(x: sg.f32[3], n: sg.i64):
    if n > 3:
        return x
    st = [x]
    st.append(x * 2.0)
    parts = [x]
    for t in range(n):
        parts.append(x * t)
    return st[0] + st[1] + sg.sum(sg.stack(parts), axis=0)


@sg.function
def assigned_past_nested_continue(x: sg.f32["N"]):
    total = sg.zeros(())
    for v in x:
        if v > 0:
            if v > 1:
                continue
            y = v * 2.0
        else:
            y = -v
        total = total + y
    return total


@sg.function
def counter_number(x: sg.f32[3], n: sg.i64):
    cnt = 0
    for i in range(n):
        cnt = cnt + i
    return x * cnt


@sg.function
def op_forms(a: sg.i64["N"], c: sg.f32["C", 2], m: sg.i32[2, 2], n: sg.i64):
    hot = sg.one_hot(a, c.shape[0])
    padded = sg.pad(sg.astype(m, sg.i64), 1, constant_values=n)
    joined = sg.concatenate((m[0], [5, 6]))
    rows = sg.concatenate((m, [[7, 8]]), 0)
    shaped = sg.ones(sg.arange(1, 3))
    d = dict(a=c, b=2)
    return hot, padded, joined, rows, shaped, d["a"] * d["b"]
