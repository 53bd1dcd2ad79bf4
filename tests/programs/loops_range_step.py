"""range with staged start, stop and step, negative steps included (SPEC §5)."""
import stagegraph as sg

# e2e: range.a=-5,6 range.b=-5,6 range.s=-3,4 runs=8


@sg.function
def stepped(a: sg.i64, b: sg.i64, s: sg.i64):
    total = sg.zeros((), dtype=sg.i64)
    count = 0
    if s != 0:
        for i in range(a, b, s):
            total = total + i
            count += 1
    down = sg.zeros((), dtype=sg.i64)
    for j in range(b, a, -2):
        down = down * 2 + j
    return total, count, down


if __name__ == "__main__":
    import numpy as np

    print(stepped(a=np.array(-2), b=np.array(5), s=np.array(2)))
