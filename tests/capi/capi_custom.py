"""A graph with a custom op, for the C API's custom op test (tests/capi/capi_test.c)."""
import stagegraph as sg


def scale_eager(x):
    return x * 3.0


def scale_result(x):
    return x.dtype, x.shape


scale = sg.custom_op("test.scale3", fn=scale_eager, result=scale_result)


@sg.function
def scaled(x: sg.f32["N"]):
    return scale(x) + 1.0


@sg.function
def plain(x: sg.f32["N"]):
    # Reaches no custom op: a session for it needs no kernel.
    return x + 1.0


def scale_vjp(x, out, ct):
    return (ct * 3.0,)


scale_differentiable = sg.custom_op("test.scale3", fn=scale_eager, result=scale_result, vjp=scale_vjp)


@sg.function
def scaled_grad(x: sg.f32["N"]):
    # d/dx sum(3x * x) = 6x: the vjp rule gives 3 * ct, the product the other 3x.
    return sg.grad(lambda v: sg.sum(scale_differentiable(v) * v))(x)
