"""Fixed twin of 38: a full permutation of the four axes."""
import stagegraph as sg

# expect: clean
# e2e: range.std=0.5,2


@sg.function
def to_nchw(x: sg.f32["N", 32, 32, 3], mean: sg.f32[3], std: sg.f32[3]):
    x = (x - mean) / std
    return sg.transpose(x, (0, 3, 1, 2))
