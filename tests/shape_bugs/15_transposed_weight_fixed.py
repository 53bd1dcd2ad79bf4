"""Fixed twin of 15: the [out, in] weight is transposed."""
import stagegraph as sg

# expect: clean


@sg.function
def head(h: sg.f32["N", 128], w: sg.f32[10, 128], b: sg.f32[10]):
    logits = h @ w.T + b
    return sg.log_softmax(logits, axis=-1)
