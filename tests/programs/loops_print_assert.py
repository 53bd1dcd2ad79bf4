"""print and assert on staged values become Print and Assert nodes that run in
program order, inside loops and branches too (SPEC §5)."""
import stagegraph as sg

# e2e: N=1,4 range.n=0,4 runs=2


@sg.function
def traced(x: sg.f32["N"], n: sg.i64):
    print("compile time only:", 3)
    assert n >= 0, "n must not be negative"
    total = sg.zeros(())
    for i in range(n):
        total = total + sg.sum(x)
        print("step", i, "total {}", total)
        if total > 100.0:
            print("large")
    assert sg.all(sg.isnan(x) == False)  # noqa: E712
    return total


if __name__ == "__main__":
    import numpy as np

    print(traced(x=np.ones(3, np.float32), n=np.array(2)))
