"""Benchmark `mlp_dynamic`: `mlp` with its weights and biases as entry inputs (JAX's
normal calling convention; weights updated at run time or shared by several weight
sets). 784 -> 512 -> 512 -> 10 with relu; batch 1 and 64.
"""
import stagegraph as sg


@sg.function
def mlp_dynamic(x: sg.f32["N", 784],
                w1: sg.f32[784, 512], b1: sg.f32[512],
                w2: sg.f32[512, 512], b2: sg.f32[512],
                w3: sg.f32[512, 10], b3: sg.f32[10]) -> sg.f32["N", 10]:
    h = sg.relu(x @ w1 + b1)
    h = sg.relu(h @ w2 + b2)
    return h @ w3 + b3
