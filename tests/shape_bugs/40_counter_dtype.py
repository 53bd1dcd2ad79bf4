"""Counting active units over a sequence with an i32 counter: the sum of a
bool tensor is i64, and i32 + i64 needs a cast."""
import stagegraph as sg


@sg.function
def count_active(xs: sg.f32["T", 16]):
    count = sg.zeros((), dtype=sg.i32)
    for t in range(xs.shape[0]):
        count = count + sg.sum(xs[t] > 0)  # expect: error
    return count
