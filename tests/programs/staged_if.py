"""Staged branches: an `if` on a run-time value (an If node with two graph
functions), with and without an else, and variables assigned in both branches."""
import stagegraph as sg

# e2e: range.limit=0.5,4 runs=6


@sg.function
def clip_norm(x: sg.f32[8], limit: sg.f32):
    norm = sg.sqrt(sg.sum(x * x))
    if norm > limit:
        x = x * (limit / norm)
    return x


@sg.function
def choose(x: sg.f32[5], flag: sg.bool):
    y = -x
    if flag:
        y = x * 2.0
    if sg.sum(x) > 0.0:
        z = y + 1.0
        label = sg.ones((), dtype=sg.i32)
    else:
        z = sg.abs(y) - 1.0
        label = sg.zeros((), dtype=sg.i32)
    return {"y": y, "z": z, "label": label}


if __name__ == "__main__":
    import numpy as np

    print(clip_norm(x=np.full(8, 3.0, np.float32), limit=np.array(1.0, np.float32)))
    print(choose(x=np.arange(5, dtype=np.float32) - 3, flag=np.array(True)))
