"""Benchmark `cnn_dynamic`: `cnn` with its filters, biases and dense weights as entry
inputs. Three blocks of 3x3 convolution (SAME) + bias + relu + 2x2 max pooling on
one 32x32 RGB image (NHWC, HWIO filters), 3 -> 16 -> 32 -> 64 channels, then a
dense layer of 4*4*64 -> 10.
"""
import stagegraph as sg


def conv_block(x, k, b):
    y = sg.relu(sg.conv2d(x, k, padding="SAME") + b)
    return sg.max_pool2d(y, 2)


@sg.function
def cnn_dynamic(x: sg.f32[1, 32, 32, 3],
                k1: sg.f32[3, 3, 3, 16], c1: sg.f32[16],
                k2: sg.f32[3, 3, 16, 32], c2: sg.f32[32],
                k3: sg.f32[3, 3, 32, 64], c3: sg.f32[64],
                w: sg.f32[1024, 10], b: sg.f32[10]) -> sg.f32[1, 10]:
    h = conv_block(x, k1, c1)    # [1, 16, 16, 16]
    h = conv_block(h, k2, c2)    # [1, 8, 8, 32]
    h = conv_block(h, k3, c3)    # [1, 4, 4, 64]
    h = sg.reshape(h, (1, -1))   # [1, 1024]
    return h @ w + b
