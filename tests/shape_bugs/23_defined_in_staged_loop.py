"""An RNN readout computed inside the staged loop and returned after it: `y`
is first defined inside the loop, so it is undefined when the loop runs zero
times (Python: UnboundLocalError), a run-time error at the read."""
import stagegraph as sg


@sg.function
def rnn_readout(xs: sg.f32["T", 16], h0: sg.f32[32], W: sg.f32[16, 32], U: sg.f32[32, 32],
                V: sg.f32[32, 4]):
    h = h0
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ W + h @ U)
        y = h @ V
    return y  # expect: runtime with T=0
