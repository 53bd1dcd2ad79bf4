"""Spatial attention pooling: a 1x1 convolution gives one score map per image
([N, 7, 7, 1]); the pooling sums over the channel axis (size 1) instead of the
spatial axes."""
import stagegraph as sg


@sg.function
def attention_pool(feats: sg.f32["N", 7, 7, 64], k_att: sg.f32[1, 1, 64, 1]):
    att = sg.sigmoid(sg.conv2d(feats, k_att))                  # [N, 7, 7, 1]
    total = sg.sum(att, axis=3)  # expect: warning
    weighted = sg.sum(feats * att, axis=(1, 2))                # [N, 64]
    return weighted, total
