"""Fixed twin of 01: SAME padding keeps the 28x28 maps, so after two poolings
they are 7x7x64 and the -1 of the reshape is exactly the batch."""
import stagegraph as sg

# expect: clean


@sg.function
def mnist_cnn(images: sg.f32["N", 28, 28, 1],
              k1: sg.f32[5, 5, 1, 32], c1: sg.f32[32],
              k2: sg.f32[5, 5, 32, 64], c2: sg.f32[64],
              w_fc: sg.f32[3136, 10], b_fc: sg.f32[10]):
    h = sg.relu(sg.conv2d(images, k1, padding="SAME") + c1)    # [N, 28, 28, 32]
    h = sg.max_pool2d(h, 2)                                    # [N, 14, 14, 32]
    h = sg.relu(sg.conv2d(h, k2, padding="SAME") + c2)         # [N, 14, 14, 64]
    h = sg.max_pool2d(h, 2)                                    # [N, 7, 7, 64]
    flat = sg.reshape(h, (-1, 7 * 7 * 64))
    return flat @ w_fc + b_fc
