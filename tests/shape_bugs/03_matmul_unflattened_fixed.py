"""Fixed twin of 03: the images are flattened to [N, 784] first."""
import stagegraph as sg

# expect: clean


@sg.function
def mlp(images: sg.f32["N", 28, 28],
        w1: sg.f32[784, 256], b1: sg.f32[256],
        w2: sg.f32[256, 10], b2: sg.f32[10]):
    x = sg.reshape(images, (images.shape[0], 28 * 28))
    h = sg.relu(x @ w1 + b1)
    return sg.softmax(h @ w2 + b2)
