"""Row normalisation behind a staged flag: `norm` is defined only in the
taken branch and returned afterwards; the else path lacks it. The error may
point at the if or at the read."""
import stagegraph as sg

# expect: error@11|14 naming norm


@sg.function
def maybe_normalize(x: sg.f32["N", 16], normalize: sg.bool):
    if normalize:
        norm = sg.sqrt(sg.sum(x * x, axis=1, keepdims=True))
        x = x / norm
    return x, norm
