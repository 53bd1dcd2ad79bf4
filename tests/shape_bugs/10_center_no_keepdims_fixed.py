"""Fixed twin of 10: keepdims=True keeps the mean a column [32, 1]."""
import stagegraph as sg

# expect: clean


@sg.function
def standardize(x: sg.f32[32, 64]):
    mu = sg.mean(x, axis=1, keepdims=True)                     # [32, 1]
    centred = x - mu
    sd = sg.sqrt(sg.mean(sg.square(centred), axis=1, keepdims=True) + 1e-5)
    return centred / sd
