"""Fixed twin of 08: one unit takes a sigmoid."""
import stagegraph as sg

# expect: clean


@sg.function
def click_probability(x: sg.f32["N", 64], w: sg.f32[64, 1], b: sg.f32[1]):
    logit = x @ w + b                                          # [N, 1]
    return sg.sigmoid(logit)
