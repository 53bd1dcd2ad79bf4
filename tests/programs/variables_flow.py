"""Program variables assigned inside staged ifs, loops and helper functions (SPEC §12):
every read in a run sees the value at the start of the run, and what the run assigns
last is stored when it succeeds. So the entries compute on locals and assign the
variables in branches, loops and helpers, and return those locals: their outputs do
not depend on what earlier runs committed (eager mode keeps its variables across the
checks, graph-run starts each run from the file's values). tests/e2e/test_train.py
checks the stored values."""
import stagegraph as sg

# e2e: range.n=0,6 range.m=0,4 range.limit=-1,7 runs=3

state = sg.variables(w=sg.zeros((3,)), step=0, pair=(sg.zeros((2,)), sg.ones((2,))), scale=2.0)


def bump(w, step, x):
    """A helper the entries call (inlined): assigns two variables."""
    w, step = w + x, step + 1
    state.w = w
    state.step = step
    return w, step


def swap_pair(pair):
    a, b = pair
    pair = (b, a + 1.0)
    state.pair = pair
    return pair


class Decay:
    def __init__(self, k):
        self.k = k

    def advance(self, w, x, n):
        """A method with a staged loop that assigns, and returns from inside it."""
        for j in range(n):
            w = w * self.k + x
            state.w = w
            if sg.sum(w) > 20.0:
                return j, w
        return n, w


@sg.function
def branchy(x: sg.f32[3], t: sg.f32):
    w, step, pair = x, 0, (x[:2], x[1:])
    state.w, state.step, state.pair = w, step, pair
    if t > 0:
        w, step = bump(w, step, x)  # then: both assigned inside the helper
        if t > 1:
            pair = swap_pair(pair)  # a nested staged if; the other path keeps the pair
    elif t < -0.5:
        w = w * state.scale  # scale is never assigned: its file value
        state.w = w
    return {"w": w, "step": step, "p0": pair[0], "p1": pair[1]}


@sg.function
def looped(x: sg.f32[3], n: sg.i64):
    w, step, pair = x, 0, (sg.zeros((2,)), sg.ones((2,)))
    state.w, state.step, state.pair = w, step, pair
    total = sg.zeros((3,))
    for i in range(n):
        w, step = bump(w, step, x * 0.5)  # assigned in each iteration
        total = total + w
        if step % 2 == 0:
            pair = swap_pair(pair)  # assigned on some iterations only
    return {"w": w, "step": step, "total": total, "p0": pair[0], "p1": pair[1]}


@sg.function
def counted(x: sg.f32[3], limit: sg.i64):
    w, step = x, 0
    state.w, state.step = w, step
    while step < limit:
        w, step = w * 0.5, step + 1
        state.w, state.step = w, step
        if sg.sum(w) < -1.0:
            break  # after the assignments of this iteration
    return {"w": w, "step": step}


@sg.function
def early(x: sg.f32[3], t: sg.f32):
    state.w = x
    state.step = 0
    if t > 0:
        state.step = 5
        return {"s": sg.sum(x), "step": 5}  # a staged return after an assignment
    state.w = x - 1.0
    state.step = 2
    return {"s": sg.sum(x - 1.0), "step": 2}


@sg.function
def nested(x: sg.f32[3], n: sg.i64, m: sg.i64):
    w, step = x, state.step * 0  # an i64 zero
    state.w, state.step = w, step
    for i in range(n):
        for j in range(m):
            step += 1
            state.step = step  # assigned in both loops
        w = w + x * step.astype(sg.f32)
        state.w = w
    return {"w": w, "step": step}


@sg.function
def method(x: sg.f32[3], n: sg.i64):
    state.w = sg.abs(x)
    r, w = Decay(0.5).advance(sg.abs(x), sg.abs(x) + 1.0, n)
    return {"r": r, "w": w}


if __name__ == "__main__":
    import numpy as np

    x = np.array([1.0, 2.0, 3.0], np.float32)
    print(branchy(x, np.float32(2.0)))
    print(looped(x, np.int64(4)))
    print(counted(x, np.int64(3)))
    print(early(x, np.float32(-1.0)))
    print(nested(x, np.int64(3), np.int64(2)))
    print(method(x, np.int64(5)))
