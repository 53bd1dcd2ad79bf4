"""Fixed twin of 41: the other branch takes the last token."""
import stagegraph as sg

# expect: clean


@sg.function
def pool_tokens(h: sg.f32["N", "T", 64], use_mean: sg.bool):
    if use_mean:
        feats = sg.mean(h, axis=1)                             # [N, 64]
    else:
        feats = h[:, -1, :]                                    # [N, 64]
    return feats
