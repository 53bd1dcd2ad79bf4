"""An autoencoder whose encoder (an entry point called as a graph function) is
given the decoder's weight: [N, 32] @ [16, 32]. The error may point at the op
inside the callee (with the call as a note) or at the call."""
import stagegraph as sg

# expect: error@11|16


@sg.function
def encoder(x: sg.f32["N", 32], w: sg.f32[32, 16]):
    return sg.tanh(x @ w)


@sg.function
def autoencoder(x: sg.f32["N", 32], w_enc: sg.f32[32, 16], w_dec: sg.f32[16, 32]):
    z = encoder(x, w_dec)
    return z @ w_dec
