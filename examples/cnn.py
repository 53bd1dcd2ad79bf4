"""A small convolutional network for 32x32 RGB images (NHWC): two blocks of
3x3 convolution + relu + 2x2 max pooling, then a dense layer to 10 classes.

The filters are entry inputs (HWIO layout).

    PYTHONPATH=compiler/python python3 examples/cnn.py
"""
import stagegraph as sg


def conv_block(x, k, b):
    y = sg.relu(sg.conv2d(x, k, padding="SAME") + b)
    return sg.max_pool2d(y, 2)


@sg.function
def cnn(x: sg.f32["N", 32, 32, 3],
        k1: sg.f32[3, 3, 3, 16], c1: sg.f32[16],
        k2: sg.f32[3, 3, 16, 32], c2: sg.f32[32],
        w: sg.f32[2048, 10], b: sg.f32[10]) -> sg.f32["N", 10]:
    h = conv_block(x, k1, c1)              # [N, 16, 16, 16]
    h = conv_block(h, k2, c2)              # [N, 8, 8, 32]
    h = sg.reshape(h, (h.shape[0], -1))    # [N, 2048]
    return sg.log_softmax(h @ w + b)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)

    def normal(*shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    x = rng.random((2, 32, 32, 3), dtype=np.float32)
    out = cnn(x,
              normal(3, 3, 3, 16, fan_in=27), np.zeros(16, np.float32),
              normal(3, 3, 16, 32, fan_in=144), np.zeros(32, np.float32),
              normal(2048, 10, fan_in=2048), np.zeros(10, np.float32))
    np.set_printoptions(precision=4, suppress=True)
    print("log-probabilities:", out.dtype, out.shape)
    print(out)
    print("classes:", out.argmax(axis=1))
