"""Cutting rows of width D into 4 patches of 16: only D = 64 fits, which only
run time can tell."""
import stagegraph as sg


@sg.function
def patch_embed(x: sg.f32["N", "D"], w: sg.f32[16, 8]):
    p = sg.reshape(x, (x.shape[0], 4, 16))  # expect: runtime with N=2,D=48
    return sg.mean(p @ w, axis=1)
