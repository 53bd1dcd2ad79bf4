"""Per-token scores [N, 12, 1] squeezed on the token axis (size 12) instead of
the trailing unit axis."""
import stagegraph as sg


@sg.function
def token_attention(h: sg.f32["N", 12, 32], w: sg.f32[32, 1]):
    scores = h @ w                                             # [N, 12, 1]
    scores = sg.squeeze(scores, axis=1)  # expect: error
    return sg.softmax(scores, axis=-1)
