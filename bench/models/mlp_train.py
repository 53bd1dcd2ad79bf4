"""Benchmark `mlp_train`: one training step of the `mlp` network (784 -> 512 -> 512 ->
10, relu, the same starting weights), batch 64, cross entropy against integer labels,
Adam (lr 1e-3). The weights and Adam's moments are program variables (SPEC §12): each
run reads them as the previous run left them and stores the step's update, as a
training loop does; the entry returns the step's loss.
"""
import stagegraph as sg
from stagegraph import optim

def loss(p, x, y):
    h = sg.relu(x @ p["w1"] + p["b1"])
    h = sg.relu(h @ p["w2"] + p["b2"])
    return sg.nn.cross_entropy(h @ p["w3"] + p["b3"], y)


opt = optim.adam(lr=1e-3)
params = {"w1": sg.weight("w1"), "b1": sg.weight("b1"), "w2": sg.weight("w2"),
          "b2": sg.weight("b2"), "w3": sg.weight("w3"), "b3": sg.weight("b3")}
state = sg.variables(params=params, opt=opt.init(params))


@sg.function
def mlp_train(x: sg.f32["N", 784], y: sg.i64["N"]):
    value, g = sg.value_and_grad(loss)(state.params, x, y)
    state.params, state.opt = opt.update(state.params, g, state.opt)
    return {"loss": value}
