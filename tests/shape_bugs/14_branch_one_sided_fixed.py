"""Fixed twin of 14: `norm` is defined before the staged if."""
import stagegraph as sg

# expect: clean


@sg.function
def maybe_normalize(x: sg.f32["N", 16]):
    norm = sg.ones((x.shape[0], 1))
    if x.shape[0] > 4:
        norm = sg.sqrt(sg.sum(x * x, axis=1, keepdims=True))
        x = x / norm
    return x, norm
