"""NHWC to NCHW conversion with a permutation of three axes for a rank-4
tensor."""
import stagegraph as sg


@sg.function
def to_nchw(x: sg.f32["N", 32, 32, 3], mean: sg.f32[3], std: sg.f32[3]):
    x = (x - mean) / std
    return sg.transpose(x, (0, 3, 1))  # expect: error
