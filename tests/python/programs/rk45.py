"""An adaptive Runge-Kutta integrator (Dormand-Prince 5(4), as scipy's RK45):
a driven, damped pendulum from t0 to t1. The step size follows the embedded
error estimate, so the number of accepted and rejected steps depends on every
rounding of sin, cos and pow along the way."""
import stagegraph as sg


def pendulum(t, y, damping, drive):
    return sg.stack([y[1], -sg.sin(y[0]) - damping * y[1] + drive * sg.cos(0.667 * t)])


@sg.function
def integrate(y0: sg.f32[2], t1: sg.f32, damping: sg.f32, drive: sg.f32, rtol: sg.f32):
    atol = 1e-6
    t = sg.zeros(())
    h = sg.full((), 0.01)
    y = y0
    accepted = 0
    rejected = 0
    while t < t1:
        h = sg.minimum(h, t1 - t)
        k1 = pendulum(t, y, damping, drive)
        k2 = pendulum(t + h / 5, y + h * (k1 / 5), damping, drive)
        k3 = pendulum(t + h * 3 / 10, y + h * (k1 * 3 / 40 + k2 * 9 / 40), damping, drive)
        k4 = pendulum(t + h * 4 / 5, y + h * (k1 * 44 / 45 - k2 * 56 / 15 + k3 * 32 / 9), damping, drive)
        k5 = pendulum(t + h * 8 / 9, y + h * (k1 * 19372 / 6561 - k2 * 25360 / 2187 + k3 * 64448 / 6561
                                              - k4 * 212 / 729), damping, drive)
        k6 = pendulum(t + h, y + h * (k1 * 9017 / 3168 - k2 * 355 / 33 + k3 * 46732 / 5247 + k4 * 49 / 176
                                      - k5 * 5103 / 18656), damping, drive)
        y5 = y + h * (k1 * 35 / 384 + k3 * 500 / 1113 + k4 * 125 / 192 - k5 * 2187 / 6784 + k6 * 11 / 84)
        k7 = pendulum(t + h, y5, damping, drive)
        err_vec = h * (k1 * 71 / 57600 - k3 * 71 / 16695 + k4 * 71 / 1920 - k5 * 17253 / 339200
                       + k6 * 22 / 525 - k7 / 40)
        scale = atol + rtol * sg.maximum(sg.abs(y), sg.abs(y5))
        err = sg.sqrt(sg.mean((err_vec / scale) ** 2))
        if err <= 1.0:
            t = t + h
            y = y5
            accepted += 1
        else:
            rejected += 1
        factor = sg.clip(0.9 * (err + 1e-10) ** -0.2, 0.2, 5.0)
        h = h * factor
    return {"y": y, "t": t, "accepted": accepted, "rejected": rejected}
