"""Per-example standardisation of a fixed batch of 32 feature vectors: the
mean is reduced without keepdims, so [32] is broadcast against the feature
axis (64) of [32, 64] instead of the batch axis."""
import stagegraph as sg


@sg.function
def standardize(x: sg.f32[32, 64]):
    mu = sg.mean(x, axis=1)                                    # [32]
    centred = x - mu  # expect: error
    sd = sg.sqrt(sg.mean(sg.square(centred), axis=1, keepdims=True) + 1e-5)
    return centred / sd
