"""A convolution with 16 output channels given the bias of a 32-channel layer."""
import stagegraph as sg


@sg.function
def conv_layer(x: sg.f32["N", 16, 16, 8], k: sg.f32[3, 3, 8, 16], c: sg.f32[32]):
    h = sg.conv2d(x, k, padding="SAME") + c  # expect: error
    return sg.relu(h)
