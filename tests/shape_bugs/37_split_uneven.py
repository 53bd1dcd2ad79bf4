"""A fused query/key/value projection sized for two parts (128 columns) and
split into three."""
import stagegraph as sg


@sg.function
def self_attention(x: sg.f32["T", 64], w_qkv: sg.f32[64, 128]):
    q, k, v = sg.split(x @ w_qkv, 3, axis=1)  # expect: error
    return sg.softmax(q @ k.T / 8.0, axis=-1) @ v
