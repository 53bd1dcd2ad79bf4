"""A data-dependent trip count: the Collatz sequence (SPEC §5)."""
import stagegraph as sg

# e2e: range.n=1,60 runs=6


@sg.function
def collatz_steps(n: sg.i64):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


if __name__ == "__main__":
    import numpy as np

    print(collatz_steps(n=np.array(27)))
