"""MLP fed 28x28 images that were never flattened: a rank-3 input meets a
784-row weight, so the matmul's inner dims are 28 and 784."""
import stagegraph as sg


@sg.function
def mlp(images: sg.f32["N", 28, 28],
        w1: sg.f32[784, 256], b1: sg.f32[256],
        w2: sg.f32[256, 10], b2: sg.f32[10]):
    h = sg.relu(images @ w1 + b1)  # expect: error
    return sg.softmax(h @ w2 + b2)
