"""Gradient clipping that tests a whole [N, 16] tensor as a Python bool: a
staged test must be a scalar (sg.any/sg.all or a reduction)."""
import stagegraph as sg


@sg.function
def clip_gradient(g: sg.f32["N", 16], max_value: sg.f32):
    if sg.abs(g) > max_value:  # expect: error
        g = g * (max_value / sg.max(sg.abs(g)))
    return g
