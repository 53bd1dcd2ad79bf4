"""Fixed twin of 19: the test is the largest magnitude, a scalar."""
import stagegraph as sg

# expect: clean
# e2e: range.max_value=0.5,2


@sg.function
def clip_gradient(g: sg.f32["N", 16], max_value: sg.f32):
    if sg.max(sg.abs(g)) > max_value:
        g = g * (max_value / sg.max(sg.abs(g)))
    return g
