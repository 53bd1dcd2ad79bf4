"""Lists appended to in staged loops become tensor lists: stack, concatenate,
indexing and len after the loop (SPEC §5)."""
import stagegraph as sg

# e2e: T=1,5 runs=2


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


if __name__ == "__main__":
    import numpy as np

    print(running(xs=np.arange(6, dtype=np.float32).reshape(2, 3)))
    print(seeded(xs=np.arange(4, dtype=np.float32)))
