"""Fixed twin of 27: the second filter takes the first layer's 8 channels."""
import stagegraph as sg

# expect: clean


@sg.function
def cnn(x: sg.f32["N", 32, 32, 3], k1: sg.f32[3, 3, 3, 8], k2: sg.f32[3, 3, 8, 32]):
    h = sg.max_pool2d(sg.relu(sg.conv2d(x, k1, padding="SAME")), 2)   # [N, 16, 16, 8]
    h = sg.relu(sg.conv2d(h, k2, padding="SAME"))
    return sg.mean(h, axis=(1, 2))
