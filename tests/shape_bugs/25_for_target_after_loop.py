"""A running sum that also returns the last index: `i`, the target of a
staged for, is undefined after a loop that ran zero times. The error may point
at the read or at the loop."""
import stagegraph as sg

# expect: error@12|14 naming i


@sg.function
def running_sum(xs: sg.f32["T", 8]):
    acc = sg.zeros((8,))
    for i in range(xs.shape[0]):
        acc = acc + xs[i]
    return acc, i
