"""A recursion with a run-time depth whose argument is static: `rec` steps a
static value up to a cap (`sg.minimum(v + 1.0, K)`) at each level, so staging
makes one specialisation per value, the last of which calls itself. Each is
staged once: the chain of 17 (cap 16) and of 65 (cap 64) compiles in
milliseconds, where staging once took 3^K passes. The run follows the chain
for d levels and returns min(d, K) in the first case, and the capped value
times x in the second. `stepped` also calls itself with the same value on odd
levels, so every specialisation is recursive and each one's first pass (its
probe) is rolled back: the levels below it are staged again from their
settled result types (once 2^K passes)."""
import stagegraph as sg

# e2e: N=3 range.d=0,80 runs=6


def rec(v, d, cap):
    if d > 0:
        return rec(sg.minimum(v + 1.0, cap), d - 1, cap)
    return v


def scaled(x, v, d):
    if d > 0:
        return scaled(x, sg.minimum(v + 1.0, 64.0), d - 1)
    return x * v


def stepped(v, d):
    if d > 0:
        if d % 2 == 1:
            return stepped(v, d - 1)
        return stepped(sg.minimum(v + 1.0, 32.0), d - 1)
    return v


@sg.function
def chain(d: sg.i64, x: sg.f32["N"]):
    zero = sg.zeros((), dtype=sg.f32)
    return rec(zero, d, 16.0), scaled(x, zero, d), stepped(zero, d)


if __name__ == "__main__":
    import numpy as np

    print(chain(d=np.array(20, np.int64), x=np.arange(3, dtype=np.float32)))
