"""Indexing as NumPy does with a tensor: integer index tensors (gathers), boolean
masks (a length only the data decides), item assignment through them (scatters),
sg.nonzero / sg.where(cond) / sg.compress, and their gradients."""
import stagegraph as sg

# e2e: N=3,7 range.idx=-5,5 range.rows=-3,3 runs=3


@sg.function
def gather(x: sg.f32[5, 4], idx: sg.i64[3], rows: sg.i32[2, 2]):
    a = x[idx]                # [3, 4], negative indices wrap
    b = x[:, idx % 4]         # [5, 3]
    c = x[rows]               # [2, 2, 4]
    d = x[1, idx % 4]         # [3]: an int beside the tensor index
    e = x[[0, -1, 2]]         # a list of ints is an index tensor too
    f = x[idx, 1:3]           # [3, 2]
    return a, b, c, d, e, f


@sg.function
def select(x: sg.f32["N", 4], threshold: sg.f32):
    keep = x[:, 0] > threshold      # the number kept varies with the input
    kept = x[keep]                  # [K, 4], K known only at run time
    big = x[x > threshold]          # a 2-d mask: [M]
    rows, cols = sg.nonzero(x > threshold)
    where_rows = sg.where(keep)[0]
    total = sg.sum(kept, axis=0)    # ops on the selected rows as on any tensor
    n = len(big)
    squared = big * big + 1.0
    return {"kept": kept, "big": big, "rows": rows, "cols": cols, "where_rows": where_rows,
            "total": total, "count": n, "squared": squared,
            "compress": sg.compress(keep, x, axis=0), "flat": sg.flatnonzero(keep)}


@sg.function
def assign(x: sg.f32["N", 4], idx: sg.i64[3], v: sg.f32[4]):
    # Each result starts as a copy (x + 0.0): an item assignment rebinds its name
    # only, and the program does not rely on x seeing it (SPEC §4).
    a = x + 0.0
    a[idx % len(x)] = v                 # rows overwritten, v broadcast
    b = x + 0.0
    b[x < 0.0] = 0.0                    # a mask with a scalar: relu by hand
    c = x + 0.0
    keep = x[:, 1] > 0.0
    c[keep] = v * 2.0                   # every selected row gets v * 2
    d = x + 0.0
    d[x > 0.5] = x[x > 0.5] * 10.0      # one value per selected element
    e = x + 0.0
    e[1:, [0, 2]] = -1.0                # basic and tensor indices together
    f = x + 0.0
    f[:, idx % 4] = v[:3]               # along axis 1, repeated indices: the last wins
    return a, b, c, d, e, f


@sg.function
def grads(x: sg.f32["N", 4], idx: sg.i64[3]):
    def loss(v):
        picked = v[idx % len(v)]                     # gather: repeated rows accumulate
        positive = v[v > 0.0]                        # boolean selection
        w = v * 1.0
        w[idx % len(v)] = picked * 3.0               # scatter: overwritten rows pass no gradient
        return sg.sum(picked * picked) + sg.sum(positive) * 2.0 + sg.sum(w * v)
    return sg.grad(loss)(x)


if __name__ == "__main__":
    import numpy as np

    x = np.array([[1, -2, 3, 0.5], [-1, 2, 0.25, 4], [2, 2, -3, 1]], dtype=np.float32)
    out = select(x=x, threshold=np.array(0.0, dtype=np.float32))
    print("kept rows:", out["kept"].shape[0], "selected:", out["count"])
    print("grads:", grads(x=x, idx=np.array([0, 0, -1], dtype=np.int64)))
