"""A graph with a custom op, for the applications in examples/embed: the op
my_app.swish is not in the library; the program gives its eager-mode function and
its result rule, and the application gives the runtime its kernel.

    graph-compile examples/embed/swish.py -o swish.sgraph
"""
import stagegraph as sg


def swish_eager(x):
    return x * sg.sigmoid(x)


def swish_result(x):
    return x.dtype, x.shape


swish = sg.custom_op("my_app.swish", fn=swish_eager, result=swish_result)


@sg.function
def gate(x: sg.f32["N"]) -> sg.f32["N"]:
    return swish(x) * 2.0
