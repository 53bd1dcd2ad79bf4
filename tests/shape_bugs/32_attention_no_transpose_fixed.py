"""Fixed twin of 32: the keys are transposed."""
import stagegraph as sg

# expect: clean


@sg.function
def attention(q: sg.f32["T", 64], k: sg.f32["T", 64], v: sg.f32["T", 64]):
    scores = q @ k.T / 8.0                                     # [T, T]
    return sg.softmax(scores, axis=-1) @ v
