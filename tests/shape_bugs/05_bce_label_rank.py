"""Logistic regression: the probabilities are [N, 1] but the 0/1 labels are
[N], so the cross-entropy terms broadcast to [N, N]."""
import stagegraph as sg

# e2e: range.y=0,1


@sg.function
def bce(x: sg.f32["N", 20], y: sg.f32["N"], w: sg.f32[20, 1], b: sg.f32[1]):
    p = sg.sigmoid(x @ w + b)                                  # [N, 1]
    ll = y * sg.log(p + 1e-7) + (1.0 - y) * sg.log(1.0 - p + 1e-7)  # expect: warning
    return -sg.mean(ll)
