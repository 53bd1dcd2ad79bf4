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
