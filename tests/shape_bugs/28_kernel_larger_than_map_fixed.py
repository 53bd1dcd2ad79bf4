"""Fixed twin of 28: SAME padding keeps the 4x4 maps."""
import stagegraph as sg

# expect: clean


@sg.function
def deep_cnn(x: sg.f32["N", 32, 32, 3], k1: sg.f32[3, 3, 3, 16], k2: sg.f32[3, 3, 16, 32],
             k3: sg.f32[5, 5, 32, 64]):
    h = sg.max_pool2d(sg.relu(sg.conv2d(x, k1, padding="SAME")), 2)   # [N, 16, 16, 16]
    h = sg.max_pool2d(sg.relu(sg.conv2d(h, k2, padding="SAME")), 2)   # [N, 8, 8, 32]
    h = sg.max_pool2d(h, 2)                                           # [N, 4, 4, 32]
    h = sg.relu(sg.conv2d(h, k3, padding="SAME"))
    return sg.mean(h, axis=(1, 2))
