"""Entry points the Java API's tests run (mobile/android/src/test/java): a small
affine map with a symbolic batch, an assert that fails on bad data, and a loop whose
trip count is an input (long enough to cancel or time out)."""
import stagegraph as sg


@sg.function
def affine(x: sg.f32["N", 3], w: sg.f32[3, 2]) -> sg.f32["N", 2]:
    return x @ w + 1.0


@sg.function
def checked_sqrt(x: sg.f32["N"]):
    assert sg.all(x >= 0.0), "x must not be negative"
    return sg.sqrt(x)


@sg.function
def count(n: sg.i64):
    i = sg.zeros((), dtype=sg.i64)
    while i < n:
        i = i + 1
    return i


if __name__ == "__main__":
    import numpy as np

    print(affine(x=np.ones((2, 3), np.float32), w=np.ones((3, 2), np.float32)))
    print(checked_sqrt(x=np.array([4.0, 9.0], np.float32)))
    print(count(n=np.array(5)))
