"""Elementwise chains, which -O2 joins into elementwise_chain nodes: an activation
written out by hand, a tree of two products, scalars from Python numbers and from
0-d inputs, a chain inside a staged loop, a chain cut where an inner result is
used twice, and one too small to join (16 elements).
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
def small(x: sg.f32[16]):
    return sg.relu(x * 3.0 - 1.0) + x
