"""Random numbers (SPEC §3): keys, split, uniform, normal, categorical and
bernoulli draws, a sampling decoder whose key is carried by a staged loop, and a
Monte Carlo estimate whose sample count is a run-time value. Eager mode and the
runtime give the same bits (tests/e2e/test_random.py compares them exactly)."""
import stagegraph as sg

# e2e: range.seed=-1000000,1000000 range.steps=1,9 range.n=1,3000 range.start=0,8

# A key from a static seed is computed at compile time (the graph holds its draws).
FIXED = sg.random.normal(sg.random.key(123456789012), (6,))


@sg.function
def draws(seed: sg.i64, logits: sg.f32[4, 6], p: sg.f32[5]):
    key = sg.random.key(seed)
    keys = sg.random.split(key, 5)
    k1, k2, k3, k4, k5 = keys
    return {
        "key": key,
        "keys": keys,
        "bits": sg.random.bits(key, (2, 4)),
        "uniform": sg.random.uniform(k1, (3, 4)),
        "normal": sg.random.normal(k2, (500,)),
        "categorical": sg.random.categorical(k3, logits),
        "categorical_axis0": sg.random.categorical(k3, logits, axis=0),
        "bernoulli": sg.random.bernoulli(k4, sg.sigmoid(p)),
        "bernoulli_shape": sg.random.bernoulli(k4, 0.25, (3, 5)),
        "ranged": sg.random.uniform(k5, (2, 3), minval=-2.0, maxval=3.0),
        "fixed": FIXED,
    }


@sg.function
def sample_decode(seed: sg.i64, start: sg.i64, table: sg.f32[8, 8], steps: sg.i64):
    """Samples `steps` tokens, each from the logits row of the previous token."""
    key = sg.random.key(seed)
    tok = start
    toks = []
    for t in range(steps):
        key, sub = sg.random.split(key)
        tok = sg.random.categorical(sub, table[tok])
        toks.append(tok)
    return sg.stack(toks), key


@sg.function
def monte_carlo_pi(seed: sg.i64, n: sg.i64):
    kx, ky = sg.random.split(sg.random.key(seed))
    x = sg.random.uniform(kx, (n,))
    y = sg.random.uniform(ky, (n, 1))[:, 0]
    return sg.sum(x * x + y * y < 1.0)  # pi is about 4 * this / n


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(3)
    out = draws(seed=np.array(7), logits=rng.standard_normal((4, 6)).astype(np.float32),
                p=rng.standard_normal(5).astype(np.float32))
    for name, value in out.items():
        print(name, value.dtype, value.shape)
    print(sample_decode(seed=np.array(1), start=np.array(0), table=rng.standard_normal((8, 8)).astype(np.float32),
                        steps=np.array(6)))
    print("pi is about", 4 * monte_carlo_pi(seed=np.array(0), n=np.array(100000)) / 100000)
