"""Bucketing values by bin edges kept as a [1, B] row, taken as its one row."""
import stagegraph as sg

# expect: clean


@sg.function
def bucket(x: sg.f32["N"], edges: sg.f32[1, 9]):
    return sg.searchsorted(edges[0], x)
