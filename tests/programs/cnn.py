"""A small convolutional classifier for 28x28 grey images (NHWC, HWIO filters)."""
import stagegraph as sg

# e2e: N=1,3 scale.k1=0.3 scale.k2=0.12 scale.w=0.05


@sg.function
def cnn(images: sg.f32["N", 28, 28, 1],
        k1: sg.f32[3, 3, 1, 8], b1: sg.f32[8],
        k2: sg.f32[3, 3, 8, 16], b2: sg.f32[16],
        w: sg.f32[576, 10], b: sg.f32[10]):
    x = sg.relu(sg.conv2d(images, k1, padding="SAME") + b1)   # [N, 28, 28, 8]
    x = sg.max_pool2d(x, 2, padding="SAME")                    # [N, 14, 14, 8]
    x = sg.relu(sg.conv2d(x, k2, padding="VALID") + b2)       # [N, 12, 12, 16]
    x = sg.max_pool2d(x, 2)                                    # [N, 6, 6, 16]
    x = sg.reshape(x, (x.shape[0], -1))                        # [N, 576]
    return x @ w + b


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(1)
    images = rng.random((2, 28, 28, 1)).astype(np.float32)
    params = {"k1": (3, 3, 1, 8), "b1": (8,), "k2": (3, 3, 8, 16), "b2": (16,), "w": (576, 10), "b": (10,)}
    weights = {k: (rng.standard_normal(s) * 0.1).astype(np.float32) for k, s in params.items()}
    logits = cnn(images=images, **weights)
    print("logits:", logits.shape, "predicted classes:", logits.argmax(axis=1))
