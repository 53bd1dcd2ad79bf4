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
    means = [sg.mean(x)]
    picks = [sg.arange(n)]
    for t in range(ys.shape[0]):
        time = sg.astype(t, sg.f32)
        key, k_noise, k_u = sg.random.split(key, 3)
        x = 0.5 * x + 25.0 * x / (1.0 + x * x) + 8.0 * sg.cos(1.2 * time) + sg.sqrt(q) * sg.random.normal(k_noise, (n,))
        resid = ys[t] - x * x / 20.0
        w = sg.exp(-0.5 * resid * resid / r)
        w = w / (sg.sum(w) + 1e-30)
        means.append(sg.sum(w * x))
        cdf = sg.cumsum(w)
        u = (sg.arange(n).astype(sg.f32) + sg.random.uniform(k_u, ())) / n
        idx = sg.sum(cdf[None, :] < u[:, None], axis=1)
        idx = sg.minimum(idx, n - 1)
        picks.append(idx)
        x = sg.take(x, idx)
    return {"means": sg.stack(means), "indices": sg.stack(picks), "particles": x}
