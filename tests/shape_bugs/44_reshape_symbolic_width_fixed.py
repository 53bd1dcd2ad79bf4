"""Fixed twin of 44: the rows are declared 64 wide."""
import stagegraph as sg

# expect: clean


@sg.function
def patch_embed(x: sg.f32["N", 64], w: sg.f32[16, 8]):
    p = sg.reshape(x, (x.shape[0], 4, 16))                     # [N, 4, 16]
    return sg.mean(p @ w, axis=1)
