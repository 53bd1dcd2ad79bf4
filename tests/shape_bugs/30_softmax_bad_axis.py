"""Attention written for batched [B, T, T] scores, applied to unbatched
[T, T] ones: softmax over axis 2 of a rank-2 tensor."""
import stagegraph as sg


@sg.function
def attention(q: sg.f32["T", 32], k: sg.f32["T", 32], v: sg.f32["T", 32]):
    scores = q @ k.T / 5.656854                                # [T, T]
    p = sg.softmax(scores, axis=2)  # expect: error
    return p @ v
