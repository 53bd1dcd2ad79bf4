"""Benchmark `rnn`: a While loop with real work per step. A tanh cell over T steps
(T = 100 in the benchmark, known only at run time), input 64, hidden 256.
"""
import stagegraph as sg

HIDDEN = 256


@sg.function
def rnn(xs: sg.f32["T", 64]) -> sg.f32[HIDDEN]:
    w = sg.weight("w")     # [64, 256]
    u = sg.weight("u")     # [256, 256]
    b = sg.weight("b")     # [256]
    h = sg.zeros((HIDDEN,))
    for t in range(xs.shape[0]):
        h = sg.tanh(xs[t] @ w + h @ u + b)
    return h
