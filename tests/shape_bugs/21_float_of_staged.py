"""One SGD step with early stopping that converts the staged loss to a Python
float to test it."""
import stagegraph as sg


@sg.function
def sgd_step(x: sg.f32["N", 8], y: sg.f32["N", 1], w: sg.f32[8, 1], lr: sg.f32):
    err = x @ w - y                                            # [N, 1]
    loss = sg.mean(err * err)
    if float(loss) < 1e-6:  # expect: error
        return w
    grad = 2.0 * sg.mean(x * err, axis=0, keepdims=True)      # [1, 8]
    return w - lr * sg.transpose(grad)
