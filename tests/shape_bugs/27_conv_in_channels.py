"""A two-layer CNN whose second filter expects 16 input channels while the
first layer produces 8."""
import stagegraph as sg


@sg.function
def cnn(x: sg.f32["N", 32, 32, 3], k1: sg.f32[3, 3, 3, 8], k2: sg.f32[3, 3, 16, 32]):
    h = sg.max_pool2d(sg.relu(sg.conv2d(x, k1, padding="SAME")), 2)   # [N, 16, 16, 8]
    h = sg.relu(sg.conv2d(h, k2, padding="SAME"))  # expect: error
    return sg.mean(h, axis=(1, 2))
