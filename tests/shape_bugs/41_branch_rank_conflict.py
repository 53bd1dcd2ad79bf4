"""Sequence pooling behind a staged flag: the mean branch gives [N, 64], the
other forgets to pick a token and gives [N, T, 64]. The error may point at the
if or at either assignment."""
import stagegraph as sg

# expect: error@11|12|14


@sg.function
def pool_tokens(h: sg.f32["N", "T", 64], use_mean: sg.bool):
    if use_mean:
        feats = sg.mean(h, axis=1)                             # [N, 64]
    else:
        feats = h                                              # [N, T, 64]
    return feats
