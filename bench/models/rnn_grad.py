"""Benchmark `rnn_grad`: backpropagation through time through a While the data ends.
The `rnn` workload's tanh cell (input 64, hidden 256, the same weights) over T steps
(T = 100, the xs' first dim, known only at run time, so the loop is a staged While and
its backward a reversed While); loss = sum of squares of the final hidden state. The
entry returns the loss and the gradients of w, u and b (entry inputs, as in a training
step). `rnn_loss` is its forward alone.
"""
import stagegraph as sg

HIDDEN = 256


def loss(params, xs):
    h = sg.zeros((HIDDEN,))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ params["w"] + h @ params["u"] + params["b"])
    return sg.sum(h * h)


@sg.function
def rnn_grad(xs: sg.f32["T", 64], w: sg.f32[64, HIDDEN], u: sg.f32[HIDDEN, HIDDEN], b: sg.f32[HIDDEN]):
    value, grads = sg.value_and_grad(loss)({"w": w, "u": u, "b": b}, xs)
    return {"loss": value, "grads": grads}   # outputs loss, grads.w, grads.u, grads.b
