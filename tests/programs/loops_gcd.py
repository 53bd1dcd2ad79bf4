"""Euclid's algorithm: a, b = b, a % b until b is zero (SPEC §5)."""
import stagegraph as sg

# e2e: range.a=1,200 range.b=0,200 runs=6


@sg.function
def gcd(a: sg.i64, b: sg.i64):
    while b != 0:
        a, b = b, a % b
    return a


if __name__ == "__main__":
    import numpy as np

    print(gcd(a=np.array(84), b=np.array(36)))
