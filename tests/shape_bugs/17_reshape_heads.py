"""Splitting a [T, 64] projection into 8 attention heads of 16: 8 x 16 is
128 columns, not 64, so the reshape asks for a different element count."""
import stagegraph as sg


@sg.function
def split_heads(x: sg.f32["T", 64], wq: sg.f32[64, 64]):
    q = x @ wq                                                 # [T, 64]
    heads = sg.reshape(q, (q.shape[0], 8, 16))  # expect: error
    return sg.transpose(heads, (1, 0, 2))
