"""Relaxed growth: a loop-carried value whose dim changes, declared with
sg.relax (SPEC §5)."""
import stagegraph as sg

# e2e: N=1,6 runs=3


@sg.function
def positives(x: sg.f32["N"]):
    kept = sg.relax(sg.zeros((0,)), "K", 0)
    for i in range(len(x)):
        if x[i] > 0.0:
            kept = sg.concatenate([kept, sg.expand_dims(x[i], 0)])
    return kept


@sg.function
def doubling(n: sg.i64):
    v = sg.relax(sg.ones((1,)), "L", 0)
    while v.shape[0] < n:
        v = sg.concatenate([v, v * 2.0])
    return v


if __name__ == "__main__":
    import numpy as np

    print(positives(x=np.array([1.0, -2.0, 3.0], np.float32)))
    print(doubling(n=np.array(5)))
