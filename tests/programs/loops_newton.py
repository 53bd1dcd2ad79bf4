"""Newton iteration to a tolerance: a while whose test reads values the body
computes (SPEC §5)."""
import stagegraph as sg

# e2e: range.a=0.5,50 runs=5


@sg.function
def newton_sqrt(a: sg.f32):
    x = a
    delta = a
    iterations = 0
    while sg.abs(delta) > 1e-5 * a and iterations < 50:
        nxt = 0.5 * (x + a / x)
        delta = nxt - x
        x = nxt
        iterations += 1
    return x, iterations


if __name__ == "__main__":
    import numpy as np

    print(newton_sqrt(a=np.array(2.0, np.float32)))
