"""Fixed twin of 05: the labels are given as a column [N, 1]."""
import stagegraph as sg

# expect: clean
# e2e: range.y=0,1


@sg.function
def bce(x: sg.f32["N", 20], y: sg.f32["N", 1], w: sg.f32[20, 1], b: sg.f32[1]):
    p = sg.sigmoid(x @ w + b)                                  # [N, 1]
    ll = y * sg.log(p + 1e-7) + (1.0 - y) * sg.log(1.0 - p + 1e-7)
    return -sg.mean(ll)
