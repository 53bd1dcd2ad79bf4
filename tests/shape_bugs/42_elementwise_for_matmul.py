"""Query/key match scores written as an elementwise product, as if both sets
had the same size: [N, 4] * [M, 4] only works when N and M agree, which only
run time can tell."""
import stagegraph as sg


@sg.function
def match_scores(q: sg.f32["N", 4], k: sg.f32["M", 4]):
    return sg.sum(q * k, axis=1)  # expect: runtime with N=3,M=2
