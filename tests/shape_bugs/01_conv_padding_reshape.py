"""MNIST CNN after the TensorFlow tutorial: both convolutions use VALID padding
where the architecture assumes SAME, and the flattening reshape's -1 hides it.
The pooled maps are 4x4x64, flattened as if they were 7x7x64, so the -1 absorbs
N*1024/3136 rows: the batch dim silently changes (reshape batch contamination)."""
import stagegraph as sg


@sg.function
def mnist_cnn(images: sg.f32["N", 28, 28, 1],
              k1: sg.f32[5, 5, 1, 32], c1: sg.f32[32],
              k2: sg.f32[5, 5, 32, 64], c2: sg.f32[64],
              w_fc: sg.f32[3136, 10], b_fc: sg.f32[10]):
    h = sg.relu(sg.conv2d(images, k1, padding="VALID") + c1)   # [N, 24, 24, 32]
    h = sg.max_pool2d(h, 2)                                    # [N, 12, 12, 32]
    h = sg.relu(sg.conv2d(h, k2, padding="VALID") + c2)        # [N, 8, 8, 64]
    h = sg.max_pool2d(h, 2)                                    # [N, 4, 4, 64]
    flat = sg.reshape(h, (-1, 7 * 7 * 64))  # expect: warning
    return flat @ w_fc + b_fc
