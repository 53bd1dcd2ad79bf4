"""Fixed twin of 43: both views belong to the same batch N."""
import stagegraph as sg

# expect: clean


@sg.function
def fuse_views(a: sg.f32["N", 8], b: sg.f32["N", 8], w: sg.f32[16, 4]):
    both = sg.concatenate([a, b], axis=1)                      # [N, 16]
    return both @ w
