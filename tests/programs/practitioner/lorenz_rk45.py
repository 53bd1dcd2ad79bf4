"""The Lorenz system integrated by an adaptive Runge-Kutta method (Dormand-Prince
5(4), as scipy's RK45): the step grows and shrinks with the embedded error
estimate, and every accepted point is kept."""
import stagegraph as sg


def lorenz(y, sigma, rho, beta):
    return sg.stack([sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]])


@sg.function
def integrate(y0: sg.f32[3], t1: sg.f32, rtol: sg.f32):
    sigma, rho, beta = 10.0, 28.0, 8.0 / 3.0
    atol = 1e-6
    t = 0.0
    h = 0.01
    y = y0
    ts, ys = [], []
    while t < t1:
        h = min(h, t1 - t)
        k1 = lorenz(y, sigma, rho, beta)
        k2 = lorenz(y + h * (k1 / 5), sigma, rho, beta)
        k3 = lorenz(y + h * (k1 * 3 / 40 + k2 * 9 / 40), sigma, rho, beta)
        k4 = lorenz(y + h * (k1 * 44 / 45 - k2 * 56 / 15 + k3 * 32 / 9), sigma, rho, beta)
        k5 = lorenz(y + h * (k1 * 19372 / 6561 - k2 * 25360 / 2187 + k3 * 64448 / 6561 - k4 * 212 / 729),
                    sigma, rho, beta)
        k6 = lorenz(y + h * (k1 * 9017 / 3168 - k2 * 355 / 33 + k3 * 46732 / 5247 + k4 * 49 / 176
                             - k5 * 5103 / 18656), sigma, rho, beta)
        y5 = y + h * (k1 * 35 / 384 + k3 * 500 / 1113 + k4 * 125 / 192 - k5 * 2187 / 6784 + k6 * 11 / 84)
        k7 = lorenz(y5, sigma, rho, beta)
        e = h * (k1 * 71 / 57600 - k3 * 71 / 16695 + k4 * 71 / 1920 - k5 * 17253 / 339200
                 + k6 * 22 / 525 - k7 / 40)
        scale = atol + rtol * sg.maximum(abs(y), abs(y5))
        err = sg.sqrt(sg.mean((e / scale) ** 2))
        if err <= 1.0:
            t = t + h
            y = y5
            ts.append(t)
            ys.append(y)
        h = h * min(5.0, max(0.2, 0.9 * (err + 1e-10) ** -0.2))
    return sg.stack(ts), sg.stack(ys)
