"""Fixed twin of 06: the NCHW images are transposed to NHWC first."""
import stagegraph as sg

# expect: clean


@sg.function
def features(images: sg.f32["N", 3, 32, 32], k: sg.f32[3, 3, 3, 16], c: sg.f32[16]):
    x = sg.transpose(images, (0, 2, 3, 1))                     # [N, 32, 32, 3]
    h = sg.conv2d(x, k, padding="SAME")
    return sg.max_pool2d(sg.relu(h + c), 2)
