"""Branches inside loops inside branches (SPEC §5)."""
import stagegraph as sg

# e2e: N=2,5 range.mode=0,3 runs=4


@sg.function
def shaped(x: sg.f32["N"], mode: sg.i64):
    y = x
    if mode == 0:
        for i in range(len(x)):
            if x[i] > 0.0:
                y = y + x[i]
            else:
                y = y - 1.0
    elif mode == 1:
        k = 0
        while k < 3:
            if sg.sum(y) > 0.0:
                y = y * 0.5
            k += 1
    else:
        y = -y
    return y


if __name__ == "__main__":
    import numpy as np

    print(shaped(x=np.array([1.0, -2.0, 3.0], np.float32), mode=np.array(0)))
