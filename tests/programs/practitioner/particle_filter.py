"""A bootstrap particle filter for the nonlinear growth model of Gordon, Salmond and
Smith (1993), with systematic resampling by searchsorted on the weights' CDF. The
process noise and the resampling offsets are inputs, so any implementation of the
same equations can be checked against it."""
import stagegraph as sg


@sg.function
def filter_means(ys: sg.f32["T"], noise: sg.f32["T", "M"], offsets: sg.f32["T"], x0: sg.f32["M"],
                 q: sg.f32, r: sg.f32):
    n = x0.shape[0]
    x = x0
    means = []
    for t in range(ys.shape[0]):
        x = 0.5 * x + 25.0 * x / (1.0 + x ** 2) + 8.0 * sg.cos(1.2 * t) \
            + sg.sqrt(q) * noise[t]
        w = sg.exp(-0.5 * (ys[t] - x ** 2 / 20.0) ** 2 / r)
        w = w / w.sum()
        means.append((w * x).sum())
        cdf = sg.cumsum(w)
        u = (sg.arange(n, dtype=sg.f32) + offsets[t]) / n
        idx = sg.minimum(sg.searchsorted(cdf, u), n - 1)
        x = x[idx]
    return sg.stack(means)
