"""Fixed twin of 16: SAME padding keeps the 3x3 branch 16x16."""
import stagegraph as sg

# expect: clean


@sg.function
def inception(x: sg.f32["N", 16, 16, 32], k1: sg.f32[1, 1, 32, 16], k3: sg.f32[3, 3, 32, 16]):
    a = sg.relu(sg.conv2d(x, k1))                              # [N, 16, 16, 16]
    b = sg.relu(sg.conv2d(x, k3, padding="SAME"))              # [N, 16, 16, 16]
    return sg.concatenate([a, b], axis=3)
