"""conv2d with stride 2 and dilation, SAME and VALID (TensorFlow's padding rule),
an even kernel with SAME padding, and average pooling."""
import stagegraph as sg

# e2e: N=1,2 scale.k=0.3 scale.k2=0.3


@sg.function
def features(x: sg.f32["N", 11, 11, 3], k: sg.f32[3, 3, 3, 4], k2: sg.f32[2, 2, 4, 2]):
    a = sg.conv2d(x, k, stride=2, padding="SAME")             # [N, 6, 6, 4]
    b = sg.conv2d(x, k, stride=2, padding="VALID")            # [N, 5, 5, 4]
    c = sg.conv2d(x, k, dilation=2, padding="SAME")           # [N, 11, 11, 4]
    d = sg.conv2d(x, k, stride=3, dilation=2, padding="VALID")  # [N, 3, 3, 4]
    e = sg.conv2d(sg.relu(a), k2, padding="SAME")             # [N, 6, 6, 2]
    p = sg.avg_pool2d(c, 3, stride=2, padding="SAME")         # [N, 6, 6, 4]
    q = sg.max_pool2d(c, 3, stride=2)                         # [N, 5, 5, 4]
    return a, b, c, d, e, p, q


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(5)
    outs = features(x=rng.standard_normal((1, 11, 11, 3)).astype(np.float32),
                    k=rng.standard_normal((3, 3, 3, 4)).astype(np.float32),
                    k2=rng.standard_normal((2, 2, 4, 2)).astype(np.float32))
    print([o.shape for o in outs])
