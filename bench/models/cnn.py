"""Benchmark `cnn`: convolution and pooling. Three blocks of 3x3 convolution (SAME)
+ bias + relu + 2x2 max pooling on one 32x32 RGB image (NHWC, HWIO filters),
3 -> 16 -> 32 -> 64 channels, then a dense layer of 4*4*64 -> 10.
"""
import stagegraph as sg


def conv_block(x, k, b):
    y = sg.relu(sg.conv2d(x, k, padding="SAME") + b)
    return sg.max_pool2d(y, 2)


@sg.function
def cnn(x: sg.f32[1, 32, 32, 3]) -> sg.f32[1, 10]:
    h = conv_block(x, sg.weight("k1"), sg.weight("c1"))   # [1, 16, 16, 16]
    h = conv_block(h, sg.weight("k2"), sg.weight("c2"))   # [1, 8, 8, 32]
    h = conv_block(h, sg.weight("k3"), sg.weight("c3"))   # [1, 4, 4, 64]
    h = sg.reshape(h, (1, -1))                             # [1, 1024]
    return h @ sg.weight("w") + sg.weight("b")
