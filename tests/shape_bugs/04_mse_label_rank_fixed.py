"""Fixed twin of 04: the prediction column is squeezed to [N] first."""
import stagegraph as sg

# expect: clean


@sg.function
def mse_loss(x: sg.f32["N", 13], y: sg.f32["N"], w: sg.f32[13, 1], b: sg.f32[1]):
    pred = sg.squeeze(x @ w + b, axis=1)                       # [N]
    return sg.mean(sg.square(pred - y))
