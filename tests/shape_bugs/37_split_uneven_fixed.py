"""Fixed twin of 37: the projection has 3 x 64 columns."""
import stagegraph as sg

# expect: clean


@sg.function
def self_attention(x: sg.f32["T", 64], w_qkv: sg.f32[64, 192]):
    q, k, v = sg.split(x @ w_qkv, 3, axis=1)
    return sg.softmax(q @ k.T / 8.0, axis=-1) @ v
