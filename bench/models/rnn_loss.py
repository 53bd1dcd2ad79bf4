"""Benchmark `rnn_loss`: the forward of `rnn_grad` alone (the same program and data,
the loss without its gradient), for the backward/forward time ratio."""
import stagegraph as sg

HIDDEN = 256


def loss(params, xs):
    h = sg.zeros((HIDDEN,))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ params["w"] + h @ params["u"] + params["b"])
    return sg.sum(h * h)


@sg.function
def rnn_loss(xs: sg.f32["T", 64], w: sg.f32[64, HIDDEN], u: sg.f32[HIDDEN, HIDDEN], b: sg.f32[HIDDEN]):
    return {"loss": loss({"w": w, "u": u, "b": b}, xs)}
