"""Fixed twin of 46: the encoder gets the encoder's weight."""
import stagegraph as sg

# expect: clean


@sg.function
def encoder(x: sg.f32["N", 32], w: sg.f32[32, 16]):
    return sg.tanh(x @ w)


@sg.function
def autoencoder(x: sg.f32["N", 32], w_enc: sg.f32[32, 16], w_dec: sg.f32[16, 32]):
    z = encoder(x, w_enc)
    return z @ w_dec
