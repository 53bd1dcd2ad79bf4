"""Fixed twin of 30: softmax over the last axis."""
import stagegraph as sg

# expect: clean


@sg.function
def attention(q: sg.f32["T", 32], k: sg.f32["T", 32], v: sg.f32["T", 32]):
    scores = q @ k.T / 5.656854                                # [T, T]
    p = sg.softmax(scores, axis=-1)
    return p @ v
