"""Bucketing values by bin edges kept as a [1, B] row, as a weight table would
store them: searchsorted needs a 1-D sequence."""
import stagegraph as sg


@sg.function
def bucket(x: sg.f32["N"], edges: sg.f32[1, 9]):
    return sg.searchsorted(edges, x)  # expect: error
