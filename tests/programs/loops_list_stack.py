"""Lists appended to in staged loops become tensor lists: stack, concatenate,
indexing and len after the loop (SPEC §5)."""
import stagegraph as sg

# e2e: T=1,5 S=3,2 range.k=0,4 runs=3


@sg.function
def running(xs: sg.f32["T", 3]):
    sums = []
    rows = []
    acc = sg.zeros((3,))
    for t in range(xs.shape[0]):
        acc = acc + xs[t]
        sums.append(acc)
        rows.append(xs[t] * 2.0)
    stacked = sg.stack(sums)
    flat = sg.concatenate(rows)
    return stacked, flat, len(sums), sums[0]


@sg.function
def seeded(xs: sg.f32["T"]):
    out = [sg.zeros(())]
    for x in xs:
        out.append(out[-1] + x)
    return sg.stack(out)


@sg.function
def along_axes(xs: sg.f32["T", 3]):
    # Stacking and concatenating a tensor list on other axes than the first.
    rows = []
    grids = []
    for t in range(xs.shape[0]):
        rows.append(xs[t] + 1.0)
        grids.append(sg.reshape(xs[t], (3, 1)) * xs[t])
    return (sg.stack(rows, axis=1), sg.stack(rows, axis=-1), sg.stack(grids, axis=2), sg.stack(grids, axis=1),
            sg.concatenate(grids, axis=1), sg.concatenate(grids, axis=-2), sg.concatenate(rows, axis=-1))


@sg.function
def nested(xs: sg.f32["T", "S"], k: sg.i64):
    # Appended to first in an inner loop: the outer list takes its item type there.
    outs = []
    for i in range(xs.shape[0]):
        if i > k:
            continue
        for j in range(xs.shape[1]):
            if j % 2 == 0:
                outs.append(xs[i, j] * 2.0)
        outs.append(xs[i, 0])
    return sg.stack(outs), len(outs)


if __name__ == "__main__":
    import numpy as np

    print(running(xs=np.arange(6, dtype=np.float32).reshape(2, 3)))
    print(seeded(xs=np.arange(4, dtype=np.float32)))
