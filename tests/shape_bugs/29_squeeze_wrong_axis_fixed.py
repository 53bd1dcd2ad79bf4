"""Fixed twin of 29: the trailing unit axis is squeezed."""
import stagegraph as sg

# expect: clean


@sg.function
def token_attention(h: sg.f32["N", 12, 32], w: sg.f32[32, 1]):
    scores = h @ w                                             # [N, 12, 1]
    scores = sg.squeeze(scores, axis=-1)                       # [N, 12]
    return sg.softmax(scores, axis=-1)
