"""Fixed twin of 25: the last index comes from the length."""
import stagegraph as sg

# expect: clean


@sg.function
def running_sum(xs: sg.f32["T", 8]):
    acc = sg.zeros((8,))
    for i in range(xs.shape[0]):
        acc = acc + xs[i]
    return acc, len(xs) - 1
