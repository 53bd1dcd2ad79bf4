"""A dense network with an embedding table, for tests/e2e/test_quantize.py."""
import stagegraph as sg


@sg.function
def net(x: sg.f32["N", 48], ids: sg.i32["N"]) -> sg.f32["N", 10]:
    e = sg.take(sg.weight("emb"), ids, axis=0)
    h = sg.tanh(x @ sg.weight("w1") + e + sg.weight("b1"))
    return h @ sg.weight("w2") + sg.weight("b2")
