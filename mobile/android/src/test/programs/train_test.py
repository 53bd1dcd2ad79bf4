"""A training graph for the Java API's TrainTest (mobile/android/src/test/java): a
softmax classifier with one hidden layer (4 -> 8 -> 3), trained by SGD with momentum
on program variables; `predict` reads the same variables and returns the logits."""
import stagegraph as sg
from stagegraph import optim


def init_params():
    # Fixed, distinct starting weights known when the program is compiled.
    def fixed(rows, cols, salt):
        i = sg.reshape(sg.arange(rows * cols, dtype=sg.f32), (rows, cols))
        return sg.sin(i * 12.9898 + salt) * (2.0 / (rows + cols)) ** 0.5

    return {"w1": fixed(4, 8, 1.0), "b1": sg.zeros((8,)), "w2": fixed(8, 3, 2.0), "b2": sg.zeros((3,))}


def logits(p, x):
    h = sg.tanh(x @ p["w1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


opt = optim.sgd(lr=0.1, momentum=0.9)
params = init_params()
state = sg.variables(params=params, opt=opt.init(params), step=0)


@sg.function
def train_step(x: sg.f32["N", 4], y: sg.i64["N"]):
    loss, g = sg.value_and_grad(lambda p: sg.nn.cross_entropy(logits(p, x), y))(state.params)
    state.params, state.opt = opt.update(state.params, g, state.opt)
    state.step += 1
    return loss


@sg.function
def predict(x: sg.f32["N", 4]):
    return {"logits": logits(state.params, x), "steps": state.step}


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = np.argmax(x[:, :3], axis=1).astype(np.int64)
    for i in range(50):
        loss = train_step(x=x, y=y)
        if i % 10 == 0:
            print(i, loss)
    print(predict(x=x[:2]))
