"""Benchmark `mlp_grad`: reverse mode through dense layers. The `mlp` network (784 ->
512 -> 512 -> 10, relu, the same weights), batch 64 (the symbolic dim N), loss = cross
entropy against integer labels (mean over the batch); the entry returns the loss and
the gradient of every weight and bias. The weights are entry inputs, as in a training
step (and as JAX, PyTorch and TensorFlow take them). `mlp_loss` is its forward alone.
"""
import stagegraph as sg


def loss(params, x, y):
    h = sg.relu(x @ params["w1"] + params["b1"])
    h = sg.relu(h @ params["w2"] + params["b2"])
    return sg.nn.cross_entropy(h @ params["w3"] + params["b3"], y)


@sg.function
def mlp_grad(x: sg.f32["N", 784], y: sg.i64["N"],
             w1: sg.f32[784, 512], b1: sg.f32[512],
             w2: sg.f32[512, 512], b2: sg.f32[512],
             w3: sg.f32[512, 10], b3: sg.f32[10]):
    params = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3}
    value, grads = sg.value_and_grad(loss)(params, x, y)
    return {"loss": value, "grads": grads}   # outputs loss, grads.w1, grads.b1, ...
