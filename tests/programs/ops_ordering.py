"""Ordering ops: cumsum (along an axis, flattened, int and bool accumulate to
i64), sort, argsort (stable) and topk, with ties among the values."""
import stagegraph as sg

# e2e: N=1,4 range.v=0,3 runs=3


@sg.function
def ordering(x: sg.f32["N", 6], v: sg.i64[8], w: sg.i32[2, 5]):
    c1 = sg.cumsum(x, axis=1)
    c0 = sg.cumsum(x, -2)
    cflat = sg.cumsum(w)                  # axis=None: flattened, i32 -> i64
    cbool = sg.cumsum(v > 1, axis=0)      # bool -> i64
    s = sg.sort(x)                        # last axis
    s0 = sg.sort(x, axis=0)
    sflat = sg.sort(w, axis=None)
    a = sg.argsort(v)                     # many ties: equal values keep their order
    aw = sg.argsort(w, axis=-2)
    tv, ti = sg.topk(v, 3)                # ties go to the lower index
    coarse = sg.floor(x * 2.0)            # float ties
    tx, tix = sg.topk(coarse, 2, axis=-1)
    tall, iall = sg.topk(w, 2, axis=0)    # k equal to the axis size
    return c1, c0, cflat, cbool, s, s0, sflat, a, aw, tv, ti, tx, tix, tall, iall


@sg.function
def ranks(scores: sg.f32[7]):
    # Ranks of each score (0 = largest), through argsort of argsort; plus a
    # topk of a constant, folded at compile time.
    order = sg.argsort(-scores)
    rank = sg.argsort(order)
    cv, ci = sg.topk(sg.arange(6) % 3, 4)
    best = sg.topk(scores, 1)[0]
    return rank, cv, ci, best, sg.cumsum(scores)[-1]


if __name__ == "__main__":
    import numpy as np

    out = ordering(x=np.array([[0.5, 0.2, 0.5, 1.0, -1.0, 0.2]], dtype=np.float32),
                   v=np.array([1, 2, 1, 0, 2, 2, 1, 0], dtype=np.int64),
                   w=np.arange(10, dtype=np.int32).reshape(2, 5) % 3)
    print("topk(v, 3) =", out[9], out[10])
    print(ranks(scores=np.array([3, 1, 4, 1, 5, 9, 2], dtype=np.float32)))
