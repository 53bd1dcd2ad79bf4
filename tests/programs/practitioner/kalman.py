"""A Kalman filter tracking a point in the plane with a constant-velocity model:
the textbook predict/update equations, the gain through the innovation
covariance's inverse."""
import stagegraph as sg


@sg.function
def track(zs: sg.f32["T", 2], dt: sg.f32, q: sg.f32, r: sg.f32):
    F = sg.eye(4)
    F[0, 2] = dt
    F[1, 3] = dt
    H = sg.eye(2, 4)
    Q = q * sg.eye(4)
    R = r * sg.eye(2)
    x = sg.zeros(4)
    P = 10.0 * sg.eye(4)
    means = []
    for z in zs:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        K = P @ H.T @ sg.linalg.inv(S)
        x = x + K @ (z - H @ x)
        P = (sg.eye(4) - K @ H) @ P
        means.append(x)
    return sg.stack(means), P
