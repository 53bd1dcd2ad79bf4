"""Fixed twin of 24: the first error is computed before the loop, so the test
is staged from the start (a While node)."""
import stagegraph as sg

# expect: clean
# e2e: range.a=1,4


@sg.function
def newton_sqrt(a: sg.f32["N"]):
    x = a
    err = sg.max(sg.abs(x * x - a))
    while err > 1e-4:
        x = 0.5 * (x + a / x)
        err = sg.max(sg.abs(x * x - a))
    return x
