"""Variables first assigned inside a staged loop or in one branch of a staged `if`
(SPEC §5): carried from their first assignment with a defined flag, read where
Python would find them bound; lists and dicts rebound on both paths join as tuples
do; a cache grown by concatenate in a loop gets a symbolic dim of its own."""
import stagegraph as sg

# e2e: N=2,5 range.n=1,5 runs=3


@sg.function
def last_scaled(x: sg.f32["N"], n: sg.i64):
    # y and the target k are first assigned inside the loops and read after them.
    i = 0
    w = 1.0
    while i < n:
        y = x * w
        w = w + 1.0
        i += 1
    for k in range(n):
        pass
    return y, k


@sg.function
def read_where_assigned(x: sg.f32["N"], n: sg.i64):
    # t is assigned in one branch only and read only where that branch ran.
    if n > 2:
        t = x * 2.0
    if n > 2:
        return t
    return x


@sg.function
def continue_before_assign(x: sg.f32["N"], n: sg.i64):
    # The branch that continues never reaches the read of what the other assigns.
    s = sg.zeros(())
    w = 0.0
    for i in range(4):
        w = w + 1.0
        if n > i:
            continue
        else:
            t = x[0] * w
        s = s + t
    return s


@sg.function
def rebind_lists(x: sg.f32["N"], n: sg.i64):
    # A list (and a dict) rebound on both paths of a staged if, and after a break.
    if n > 2:
        pair = [x, x * 2.0]
        named = {"a": x[0], "b": x[1]}
    else:
        pair = [x * 3.0, x]
        named = {"a": x[1], "b": x[0]}
    acc = [x[0], x[1]]
    for i in range(n):
        if acc[0] > x[1] + 2.0:
            break
        acc = [acc[0] + 1.0, acc[1] * 2.0]
    return pair[0] - pair[1], named["a"] - named["b"], acc[0], acc[1]


@sg.function
def grow_cache(x: sg.f32["N"], n: sg.i64):
    # A cache grown by concatenate: its first dim changes across iterations and
    # becomes symbolic; it stays so through the second loop.
    cache = x[:1]
    for i in range(n):
        cache = sg.concatenate([cache, cache[-1:] * 0.5])
    for i in range(n):
        cache = sg.concatenate([cache, cache[-1:] + 1.0])
    return cache, sg.sum(cache)


@sg.function
def assigned_on_some_iterations(x: sg.f32["N"], n: sg.i64):
    # last is assigned on even iterations only: an odd last iteration keeps the
    # value of the one before, as in Python.
    for i in range(n):
        if i % 2 == 0:
            last = x * sg.sum(x[:1]) + i
    return last


@sg.function
def created_in_nested_loops(x: sg.f32["N"], n: sg.i64):
    for j in range(n):
        for i in range(x.shape[0]):
            v = x[i] * 2.0 + j
    return v


@sg.function
def created_before_break(x: sg.f32["N"]):
    i = 0
    while True:
        last = x[i]
        if last > 0.5 or i + 1 >= x.shape[0]:
            break
        i += 1
    return last, i


@sg.function
def maybe_then_loop(x: sg.f32["N"], n: sg.i64):
    if x[0] > 0.0:
        t = x * 2.0
    for i in range(n):
        t = x + 1.0
    return t


@sg.function
def prompt_then_generate(x: sg.f32["N"], n: sg.i64):
    # h is first assigned in one loop, then read and reassigned by the next: the
    # second loop carries it with its defined flag (a prompt fed, then decoding).
    for t in range(x.shape[0]):
        h = x[t] * 2.0
    outs = []
    for _ in range(n):
        outs.append(h)
        h = sg.tanh(h + 1.0)
    return sg.stack(outs)
