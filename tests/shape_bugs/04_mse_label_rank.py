"""Linear regression whose targets are [N] while the predictions are [N, 1]:
pred - y broadcasts to [N, N] and the loss averages N*N wrong residuals."""
import stagegraph as sg


@sg.function
def mse_loss(x: sg.f32["N", 13], y: sg.f32["N"], w: sg.f32[13, 1], b: sg.f32[1]):
    pred = x @ w + b                                           # [N, 1]
    return sg.mean(sg.square(pred - y))  # expect: warning
