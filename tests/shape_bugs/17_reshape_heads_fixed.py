"""Fixed twin of 17: 8 heads of 8."""
import stagegraph as sg

# expect: clean


@sg.function
def split_heads(x: sg.f32["T", 64], wq: sg.f32[64, 64]):
    q = x @ wq                                                 # [T, 64]
    heads = sg.reshape(q, (q.shape[0], 8, 8))
    return sg.transpose(heads, (1, 0, 2))
