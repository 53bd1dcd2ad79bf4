"""Benchmark `dispatch`: the per-node cost. A chain of 1,000 elementwise ops on 16 floats,
alternating a multiply and an add. The Python loop is static, so it unrolls at compile
time into 1,000 nodes; compile with -O0 so that no pass fuses them.
"""
import stagegraph as sg

CHAIN = 1000


@sg.function
def dispatch(x: sg.f32[16]) -> sg.f32[16]:
    for k in range(CHAIN):
        if k % 2 == 0:
            x = x * 1.0001
        else:
            x = x + 0.0001
    return x
