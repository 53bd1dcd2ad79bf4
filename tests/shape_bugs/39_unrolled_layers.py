"""A tower of three layers sharing one weight in a static (unrolled) loop: the
weight maps 64 to 32, so the second iteration multiplies [N, 32] by [64, 32]."""
import stagegraph as sg


@sg.function
def tower(x: sg.f32["N", 64], w: sg.f32[64, 32], b: sg.f32[32]):
    h = x
    for layer in range(3):
        h = sg.relu(h @ w + b)  # expect: error
    return h
