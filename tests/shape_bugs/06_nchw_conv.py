"""Images in PyTorch's NCHW layout fed to an NHWC convolution: the filter
expects 3 input channels but the last axis holds 32 columns."""
import stagegraph as sg


@sg.function
def features(images: sg.f32["N", 3, 32, 32], k: sg.f32[3, 3, 3, 16], c: sg.f32[16]):
    h = sg.conv2d(images, k, padding="SAME")  # expect: error
    return sg.max_pool2d(sg.relu(h + c), 2)
