"""Dot-product attention that forgets to transpose the keys: [T, 64] @ [T, 64]
has inner dims 64 and T, which only run time can compare (they agree when T is
64)."""
import stagegraph as sg


@sg.function
def attention(q: sg.f32["T", 64], k: sg.f32["T", 64], v: sg.f32["T", 64]):
    scores = q @ k / 8.0  # expect: runtime with T=5
    return sg.softmax(scores, axis=-1) @ v
