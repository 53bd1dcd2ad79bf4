"""Softmax and log-softmax: attention weights over a symbolic length, large
logits (the max is subtracted first), and a softmax along axis 0."""
import stagegraph as sg

# e2e: T=1,4 S=3,2


@sg.function
def attention(q: sg.f32["T", 8], k: sg.f32["S", 8], v: sg.f32["S", 8]):
    scores = q @ k.T * (1.0 / 8 ** 0.5)           # [T, S]
    weights = sg.softmax(scores, axis=-1)
    return weights @ v, sg.log_softmax(scores, axis=0)


@sg.function
def sharp(x: sg.f32[4, 6]):
    big = x * 100.0
    return sg.softmax(big), sg.softmax(x, axis=0), sg.log_softmax(big, axis=-1)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(6)
    out, logp = attention(q=rng.standard_normal((2, 8)).astype(np.float32),
                          k=rng.standard_normal((3, 8)).astype(np.float32),
                          v=rng.standard_normal((3, 8)).astype(np.float32))
    print(out.shape, np.exp(logp).sum(axis=0))
