"""Fixed twin of 21: the staged loss is the test itself (an If node)."""
import stagegraph as sg

# expect: clean


@sg.function
def sgd_step(x: sg.f32["N", 8], y: sg.f32["N", 1], w: sg.f32[8, 1], lr: sg.f32):
    err = x @ w - y                                            # [N, 1]
    loss = sg.mean(err * err)
    if loss < 1e-6:
        return w
    grad = 2.0 * sg.mean(x * err, axis=0, keepdims=True)      # [1, 8]
    return w - lr * sg.transpose(grad)
