"""Fixed twin of 11: keepdims=True keeps the mean a column [N, 1]."""
import stagegraph as sg

# expect: clean


@sg.function
def standardize(x: sg.f32["N", 64]):
    mu = sg.mean(x, axis=1, keepdims=True)                     # [N, 1]
    centred = x - mu
    sd = sg.sqrt(sg.mean(sg.square(centred), axis=1, keepdims=True) + 1e-5)
    return centred / sd
