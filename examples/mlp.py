"""A multi-layer perceptron for 28x28 images: 784 -> 512 -> 512 -> 10.

The weights are entry inputs here; with a weights file they would come from
sg.weight("w1") and so on.

    PYTHONPATH=compiler/python python3 examples/mlp.py      # eager mode
    graph-compile examples/mlp.py -o mlp.sgraph            # a graph file
"""
import stagegraph as sg


@sg.function
def mlp(x: sg.f32["N", 784],
        w1: sg.f32[784, 512], b1: sg.f32[512],
        w2: sg.f32[512, 512], b2: sg.f32[512],
        w3: sg.f32[512, 10], b3: sg.f32[10]) -> sg.f32["N", 10]:
    h = sg.relu(x @ w1 + b1)
    h = sg.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    return sg.softmax(logits)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)

    def layer(n_in, n_out):
        w = rng.standard_normal((n_in, n_out)).astype(np.float32) / np.float32(np.sqrt(n_in))
        return w, np.zeros(n_out, np.float32)

    x = rng.random((4, 784), dtype=np.float32)
    (w1, b1), (w2, b2), (w3, b3) = layer(784, 512), layer(512, 512), layer(512, 10)
    probs = mlp(x, w1, b1, w2, b2, w3, b3)
    np.set_printoptions(precision=4, suppress=True)
    print("probabilities:", probs.dtype, probs.shape)
    print(probs)
    print("classes:", probs.argmax(axis=1))
