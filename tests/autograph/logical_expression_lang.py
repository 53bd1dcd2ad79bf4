"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/logical_expression_test.py (Apache License 2.0):
the functions that need `lambda`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
"""
import stagegraph as sg


def composite_ors_with_callable(x, y, z):
    z1 = lambda: z  # noqa: E731
    return x or y or z1()


@sg.function
def composite_ors_with_callable_py():
    return (composite_ors_with_callable(False, True, False), composite_ors_with_callable(False, False, True),
            composite_ors_with_callable(False, False, False))


@sg.function
def composite_ors_with_callable_tf(x: sg.bool, y: sg.bool, z: sg.bool):
    return composite_ors_with_callable(x, y, z)
# cases: composite_ors_with_callable_tf x=False y=True z=False | x=False y=False z=True | x=False y=False z=False
