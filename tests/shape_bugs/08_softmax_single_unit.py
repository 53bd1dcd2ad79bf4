"""A binary output layer of one unit followed by softmax: a softmax over an
axis of size 1 is 1.0 everywhere, whatever the input."""
import stagegraph as sg


@sg.function
def click_probability(x: sg.f32["N", 64], w: sg.f32[64, 1], b: sg.f32[1]):
    logit = x @ w + b                                          # [N, 1]
    return sg.softmax(logit, axis=-1)  # expect: warning
