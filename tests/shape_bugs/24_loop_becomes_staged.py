"""Newton's square root iterated until the error is small: `err` starts as a
Python float, so the while test is static on entry and becomes staged after
the first iteration."""
import stagegraph as sg


@sg.function
def newton_sqrt(a: sg.f32["N"]):
    x = a
    err = 1.0
    while err > 1e-4:  # expect: error
        x = 0.5 * (x + a / x)
        err = sg.max(sg.abs(x * x - a))
    return x
