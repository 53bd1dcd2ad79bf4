"""Fixed twin of 07: one logit is thresholded at 0."""
import stagegraph as sg

# expect: clean


@sg.function
def predict(x: sg.f32["N", 32], w1: sg.f32[32, 16], b1: sg.f32[16],
            w2: sg.f32[16, 1], b2: sg.f32[1]):
    h = sg.relu(x @ w1 + b1)
    logits = h @ w2 + b2                                       # [N, 1]
    return logits[:, 0] > 0.0
