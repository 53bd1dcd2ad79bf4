"""A 784-512-512-10 multilayer perceptron on flattened 28x28 images.

The weights are entry inputs, so one graph serves any trained parameters.
"""
import stagegraph as sg

# Weights drawn at the scale of a trained layer (1/sqrt(fan_in)) keep the logits O(1).
# e2e: scale.w1=0.036 scale.w2=0.044 scale.w3=0.044 N=1,3


@sg.function
def mlp(x: sg.f32["N", 784],
        w1: sg.f32[784, 512], b1: sg.f32[512],
        w2: sg.f32[512, 512], b2: sg.f32[512],
        w3: sg.f32[512, 10], b3: sg.f32[10]):
    h = sg.relu(x @ w1 + b1)
    h = sg.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    return sg.softmax(logits, axis=-1)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)
    shapes = {"x": (4, 784), "w1": (784, 512), "b1": (512,), "w2": (512, 512),
              "b2": (512,), "w3": (512, 10), "b3": (10,)}
    args = {k: (rng.standard_normal(s) * 0.04).astype(np.float32) for k, s in shapes.items()}
    probs = mlp(**args)
    print("class probabilities:", probs.shape, "row sums:", probs.sum(axis=1))
