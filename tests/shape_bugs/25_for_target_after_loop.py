"""A running sum that also returns the last index: `i`, the target of a
staged for, is undefined after a loop that ran zero times (Python:
UnboundLocalError), a run-time error at the read."""
import stagegraph as sg


@sg.function
def running_sum(xs: sg.f32["T", 8]):
    acc = sg.zeros((8,))
    for i in range(xs.shape[0]):
        acc = acc + xs[i]
    return acc, i  # expect: runtime with T=0
