"""Fusing the features of two views side by side, but the views are annotated
as separately sized batches: the concatenation along the features needs N and
M to agree, which only run time can tell."""
import stagegraph as sg


@sg.function
def fuse_views(a: sg.f32["N", 8], b: sg.f32["M", 8], w: sg.f32[16, 4]):
    both = sg.concatenate([a, b], axis=1)  # expect: runtime with N=3,M=2
    return both @ w
