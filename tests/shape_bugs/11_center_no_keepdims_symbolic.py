"""Like 10 with a symbolic batch: [N] against the feature axis (64) of [N, 64]
can only be checked at run time (it broadcasts, wrongly, when N is 64)."""
import stagegraph as sg


@sg.function
def standardize(x: sg.f32["N", 64]):
    mu = sg.mean(x, axis=1)                                    # [N]
    centred = x - mu  # expect: runtime with N=3
    sd = sg.sqrt(sg.mean(sg.square(centred), axis=1, keepdims=True) + 1e-5)
    return centred / sd
