"""Fixed twin of 40: the counter is i64 like the sums."""
import stagegraph as sg

# expect: clean


@sg.function
def count_active(xs: sg.f32["T", 16]):
    count = sg.zeros((), dtype=sg.i64)
    for t in range(xs.shape[0]):
        count = count + sg.sum(xs[t] > 0)
    return count
