"""An output layer whose weight is stored [out, in] (PyTorch's layout) but is
multiplied as [in, out]."""
import stagegraph as sg


@sg.function
def head(h: sg.f32["N", 128], w: sg.f32[10, 128], b: sg.f32[10]):
    logits = h @ w + b  # expect: error
    return sg.log_softmax(logits, axis=-1)
