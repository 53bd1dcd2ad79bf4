"""Elementwise chains, which -O2 joins into elementwise_chain nodes: an activation
written out by hand, a tree of two products, scalars from Python numbers and from
0-d inputs, a chain inside a staged loop, an inner result used twice (after
the chain too: one more output of it), an optimizer-like update whose inner
results are returned (a chain with three outputs), and one too small to join
(16 elements).
"""
import stagegraph as sg

# e2e: N=1,700 runs=2 range.steps=0,6


@sg.function
def gelu_by_hand(x: sg.f32["N", 64]):
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))), with x**3 as x*x*x
    inner = 0.7978845608 * (x + 0.044715 * (x * x * x))
    return 0.5 * x * (1.0 + sg.tanh(inner))


@sg.function
def tree(a: sg.f32["N", 32], b: sg.f32["N", 32], c: sg.f32["N", 32], d: sg.f32["N", 32]):
    return sg.relu(a * b + c * d) - sg.maximum(a, d) / 2.0


@sg.function
def scalars(x: sg.f32["N", 48], s: sg.f32):
    return sg.minimum(sg.gelu(x * s + 1.0), s)


@sg.function
def in_a_loop(x: sg.f32["N", 40], steps: sg.i64):
    h = x
    i = 0
    while i < steps:
        h = sg.tanh(h * 0.9 + x) - h / 8.0
        i += 1
    return h


@sg.function
def shared_inner(x: sg.f32["N", 36]):
    y = sg.tanh(x * 2.0 - 1.0)
    return y * y + y, sg.relu(y)


@sg.function
def adam_like(p: sg.f32["N", 24], g: sg.f32["N", 24], m: sg.f32["N", 24], v: sg.f32["N", 24], lr: sg.f32):
    m1 = 0.9 * m + 0.1 * g
    v1 = 0.999 * (v * v) + 0.001 * (g * g)
    return p - lr * m1 / (sg.sqrt(v1) + 1e-8), m1, v1


@sg.function
def small(x: sg.f32[16]):
    return sg.relu(x * 3.0 - 1.0) + x
