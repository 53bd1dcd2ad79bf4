"""Power iteration until the eigenvalue estimate settles (SPEC §5)."""
import stagegraph as sg

# e2e: scale.m=1.0 runs=3


@sg.function
def dominant(m: sg.f32[4, 4]):
    a = m @ sg.transpose(m) + sg.eye(4)
    w = a @ (sg.ones((4,)) * 0.5)
    estimate = sg.sqrt(sg.sum(w * w))
    v = w / estimate
    change = estimate  # staged from the start: the loop is a While node
    steps = 0
    while change > 1e-4 and steps < 200:
        w = a @ v
        new = sg.sqrt(sg.sum(w * w))
        v = w / new
        change = sg.abs(new - estimate)
        estimate = new
        steps += 1
    return estimate


if __name__ == "__main__":
    import numpy as np

    print(dominant(m=np.eye(4, dtype=np.float32)))
