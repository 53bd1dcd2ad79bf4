"""Program variables assigned inside staged ifs, loops and helper functions (SPEC §12):
in a run a variable is a local of the entry that starts at its committed value; a read
sees the run's latest assignment. Each entry assigns every variable it uses first, so
its outputs do not depend on what earlier runs committed (eager mode keeps its
variables across the checks, graph-run starts each run from the file's values)."""
import stagegraph as sg

# e2e: range.n=0,6 range.m=0,4 range.limit=-1,7 runs=3

state = sg.variables(w=sg.zeros((3,)), step=0, pair=(sg.zeros((2,)), sg.ones((2,))), scale=2.0)


def bump(x):
    """A helper the entries call (inlined): assigns two variables."""
    state.w = state.w + x
    state.step += 1


def swap_pair():
    a, b = state.pair
    state.pair = (b, a + 1.0)


class Decay:
    def __init__(self, k):
        self.k = k

    def advance(self, x, n):
        """A method with a staged loop that assigns, and returns from inside it."""
        for j in range(n):
            state.w = state.w * self.k + x
            if sg.sum(state.w) > 20.0:
                return j
        return n


@sg.function
def branchy(x: sg.f32[3], t: sg.f32):
    state.w = x
    state.step = 0
    state.pair = (x[:2], x[1:])
    if t > 0:
        bump(x)  # then: both assigned inside the helper
        if t > 1:
            swap_pair()  # a nested staged if; the other path keeps the pair
    elif t < -0.5:
        state.w = state.w * state.scale  # scale is never assigned: its file value
    return {"w": state.w, "step": state.step, "p0": state.pair[0], "p1": state.pair[1]}


@sg.function
def looped(x: sg.f32[3], n: sg.i64):
    state.w = x
    state.step = 0
    state.pair = (sg.zeros((2,)), sg.ones((2,)))
    total = sg.zeros((3,))
    for i in range(n):
        bump(x * 0.5)  # carried by the loop
        total = total + state.w  # reads this iteration's value
        if state.step % 2 == 0:
            swap_pair()  # assigned on some iterations only
    return {"w": state.w, "step": state.step, "total": total, "p0": state.pair[0], "p1": state.pair[1]}


@sg.function
def counted(x: sg.f32[3], limit: sg.i64):
    state.w = x
    state.step = 0
    while state.step < limit:  # the test reads the carried value
        state.w = state.w * 0.5
        state.step += 1
        if sg.sum(state.w) < -1.0:
            break  # after the assignments of this iteration
    return {"w": state.w, "step": state.step}


@sg.function
def early(x: sg.f32[3], t: sg.f32):
    state.w = x
    state.step = 0
    if t > 0:
        state.step = 5
        return {"s": sg.sum(state.w), "step": state.step}  # a staged return after an assignment
    state.w = state.w - 1.0
    state.step += 2
    return {"s": sg.sum(state.w), "step": state.step}


@sg.function
def nested(x: sg.f32[3], n: sg.i64, m: sg.i64):
    state.w = x
    state.step = 0
    for i in range(n):
        for j in range(m):
            state.step += 1  # carried by both loops
        state.w = state.w + x * state.step.astype(sg.f32)
    return {"w": state.w, "step": state.step}


@sg.function
def method(x: sg.f32[3], n: sg.i64):
    state.w = sg.abs(x)
    r = Decay(0.5).advance(sg.abs(x) + 1.0, n)
    return {"r": r, "w": state.w}


if __name__ == "__main__":
    import numpy as np

    x = np.array([1.0, 2.0, 3.0], np.float32)
    print(branchy(x, np.float32(2.0)))
    print(looped(x, np.int64(4)))
    print(counted(x, np.int64(3)))
    print(early(x, np.float32(-1.0)))
    print(nested(x, np.int64(3), np.int64(2)))
    print(method(x, np.int64(5)))
