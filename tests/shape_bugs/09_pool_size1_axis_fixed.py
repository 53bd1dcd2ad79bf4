"""Fixed twin of 09: the attention mass is summed over the spatial axes."""
import stagegraph as sg

# expect: clean


@sg.function
def attention_pool(feats: sg.f32["N", 7, 7, 64], k_att: sg.f32[1, 1, 64, 1]):
    att = sg.sigmoid(sg.conv2d(feats, k_att))                  # [N, 7, 7, 1]
    total = sg.sum(att, axis=(1, 2))                           # [N, 1]
    weighted = sg.sum(feats * att, axis=(1, 2))                # [N, 64]
    return weighted, total
