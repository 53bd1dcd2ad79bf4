"""Benchmark `rnn_train`: one training step of the `rnn` workload's tanh cell (input 64,
hidden 256, the same starting weights) over T = 100 steps (the xs' first dim, known
only at run time: a staged While, its backward a reversed While); loss = sum of
squares of the final hidden state; Adam (lr 1e-3). The weights and Adam's moments are
program variables (SPEC §12); the entry returns the step's loss.
"""
import stagegraph as sg
from stagegraph import optim

HIDDEN = 256


def loss(p, xs):
    h = sg.zeros((HIDDEN,))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ p["w"] + h @ p["u"] + p["b"])
    return sg.sum(h * h)


opt = optim.adam(lr=1e-3)
params = {"w": sg.weight("w"), "u": sg.weight("u"), "b": sg.weight("b")}
state = sg.variables(params=params, opt=opt.init(params))


@sg.function
def rnn_train(xs: sg.f32["T", 64]):
    value, g = sg.value_and_grad(loss)(state.params, xs)
    state.params, state.opt = opt.update(state.params, g, state.opt)
    return {"loss": value}
