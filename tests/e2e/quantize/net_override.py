"""net.py with per-weight storage: w1 and the embedding table as the QUANTIZE_*
names say (tests/e2e/test_quantize.py writes a copy with them filled in)."""
import stagegraph as sg


@sg.function
def net(x: sg.f32["N", 48], ids: sg.i32["N"]) -> sg.f32["N", 10]:
    e = sg.take(sg.weight("emb", quantize="QUANTIZE_EMB"), ids, axis=0)
    h = sg.tanh(x @ sg.weight("w1", quantize="QUANTIZE_W1") + e + sg.weight("b1"))
    return h @ sg.weight("w2") + sg.weight("b2")
