"""Fixed twin of 26: one bias per output channel."""
import stagegraph as sg

# expect: clean


@sg.function
def conv_layer(x: sg.f32["N", 16, 16, 8], k: sg.f32[3, 3, 8, 16], c: sg.f32[16]):
    h = sg.conv2d(x, k, padding="SAME") + c
    return sg.relu(h)
