"""Benchmark `mlp_loss`: the forward of `mlp_grad` alone (the same program and data,
the loss without its gradient), for the backward/forward time ratio."""
import stagegraph as sg


def loss(params, x, y):
    h = sg.relu(x @ params["w1"] + params["b1"])
    h = sg.relu(h @ params["w2"] + params["b2"])
    return sg.nn.cross_entropy(h @ params["w3"] + params["b3"], y)


@sg.function
def mlp_loss(x: sg.f32["N", 784], y: sg.i64["N"],
             w1: sg.f32[784, 512], b1: sg.f32[512],
             w2: sg.f32[512, 512], b2: sg.f32[512],
             w3: sg.f32[512, 10], b3: sg.f32[10]):
    params = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3}
    return {"loss": loss(params, x, y)}
