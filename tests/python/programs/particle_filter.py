"""A bootstrap particle filter for the classic nonlinear growth model
(Gordon, Salmond and Smith, 1993):

    x[t] = x/2 + 25 x / (1 + x^2) + 8 cos(1.2 t) + v,   v ~ N(0, q)
    y[t] = x^2 / 20 + w,                                w ~ N(0, r)

Each step propagates the particles, weighs them by the likelihood of the
observation, and resamples systematically. The resampling indices depend on
every bit of the weights (a particle at a CDF boundary goes one way or the
other), so they are what tells two implementations of exp apart."""
import stagegraph as sg


@sg.function
def particle_filter(ys: sg.f32["T"], seed: sg.i64, q: sg.f32, r: sg.f32):
    n = 256
    key = sg.random.key(seed)
    key, k0 = sg.random.split(key)
    x = sg.random.normal(k0, (n,)) * 2.0
    means = sg.zeros(ys.shape)
    picks = sg.zeros((n,), dtype=sg.i64)
    step = 0
    time = sg.zeros(())
    for y in ys:
        key, k_noise, k_u = sg.random.split(key, 3)
        x = 0.5 * x + 25.0 * x / (1.0 + x * x) + 8.0 * sg.cos(1.2 * time) + sg.sqrt(q) * sg.random.normal(k_noise, (n,))
        resid = y - x * x / 20.0
        w = sg.exp(-0.5 * resid * resid / r)
        w = w / (sg.sum(w) + 1e-30)
        means[step] = sg.sum(w * x)
        cdf = sg.cumsum(w)
        u = (sg.arange(n).astype(sg.f32) + sg.random.uniform(k_u, ())) / n
        idx = sg.sum(cdf[None, :] < u[:, None], axis=1)
        idx = sg.minimum(idx, n - 1)
        picks = picks * 7 + idx  # every step's indices, hashed
        x = sg.take(x, idx)
        time = time + 1.0
        step += 1
    return {"means": means, "indices": picks, "particles": x}
