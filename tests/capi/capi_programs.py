"""Entry points the C API tests (tests/capi/*.c) run, compiled by graph-compile
when the tests are built."""
import stagegraph as sg


@sg.function
def affine(x: sg.f32["N", 3], w: sg.f32[3, 2]) -> sg.f32["N", 2]:
    return x @ w + 1.0


@sg.function
def spin(n: sg.i64):
    # Never ends for n >= 0: i only grows (overflow needs 2**63 steps).
    i = n * 0
    while i >= 0:
        i = i + n + 1
    return i


@sg.function
def spin_vector(x: sg.f32["N"]):
    # Never ends: the sum only grows, and stays above -1 once infinite.
    while sg.sum(x) > -1.0:
        x = x + 1.0
    return x


@sg.function
def outer(x: sg.f32["N"]):
    # N * N floats at once: 64 MiB for N = 4096.
    return sg.sum(sg.reshape(x, (-1, 1)) * sg.reshape(x, (1, -1)))


@sg.function
def chatty(x: sg.f32[2]):
    print("x is", x)
    assert sg.all(x > 0.0), "x must be positive"
    return x * 2.0


# Training (SPEC §12): least squares by gradient descent on state the Session keeps.
fit = sg.variables(w=sg.zeros((3,)), step=0)


@sg.function
def fit_step(x: sg.f32["N", 3], y: sg.f32["N"]):
    assert sg.max(sg.abs(y)) < 1000.0, "y out of range"
    loss, g = sg.value_and_grad(lambda w: sg.mean((x @ w - y) ** 2))(fit.w)
    fit.w = fit.w - 0.1 * g
    fit.step += 1
    return loss


@sg.function
def fit_predict(x: sg.f32["N", 3]):
    return {"y": x @ fit.w, "steps": fit.step}
