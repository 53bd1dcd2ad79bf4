"""Fixed twin of 42: every query against every key, [N, M]."""
import stagegraph as sg

# expect: clean


@sg.function
def match_scores(q: sg.f32["N", 4], k: sg.f32["M", 4]):
    return q @ k.T
