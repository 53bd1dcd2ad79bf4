"""An inception-style block: the 3x3 branch uses VALID padding, so its maps
are 14x14 while the 1x1 branch keeps 16x16; the channel concatenation then
joins unequal spatial dims."""
import stagegraph as sg


@sg.function
def inception(x: sg.f32["N", 16, 16, 32], k1: sg.f32[1, 1, 32, 16], k3: sg.f32[3, 3, 32, 16]):
    a = sg.relu(sg.conv2d(x, k1))                              # [N, 16, 16, 16]
    b = sg.relu(sg.conv2d(x, k3, padding="VALID"))             # [N, 14, 14, 16]
    return sg.concatenate([a, b], axis=3)  # expect: error
