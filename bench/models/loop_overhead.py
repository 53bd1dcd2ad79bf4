"""Benchmark `loop_overhead`: the per-iteration cost of While. n iterations (n = 100,000
in the benchmark, an input) of one scalar add, besides the loop counter.
"""
import stagegraph as sg


@sg.function
def loop_overhead(n: sg.i64) -> sg.f32:
    i = sg.zeros((), dtype=sg.i64)
    acc = sg.zeros(())
    while i < n:
        acc = acc + 1.0
        i = i + 1
    return acc
