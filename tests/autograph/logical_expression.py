"""Ported from TensorFlow's tensorflow/python/autograph/tests/logical_expression_test.py
(Apache License 2.0): `and`, `or`, chained comparisons on Python and staged values."""
import stagegraph as sg


def composite_ors(x, y, z):
    return x or y or z


def composite_ands(x, y, z):
    return x and y and z


def composite_mixed(x, y, z):
    return x or y or z and y and z


def equality(x, y):
    return x == y


def inequality(x, y):
    return x != y


def multiple_equality(x, y, z):
    return x == y == z


def comparison(x, y, z):
    return x < y and y < z


@sg.function
def composite_py():
    return (composite_ors(False, True, False), composite_ors(False, False, False),
            composite_ands(True, True, True), composite_ands(True, False, True),
            composite_mixed(False, True, True))


@sg.function
def composite_tf(x: sg.bool, y: sg.bool, z: sg.bool):
    return composite_ors(x, y, z), composite_ands(x, y, z), composite_mixed(x, y, z)
# cases: composite_tf x=False y=True z=False | x=False y=False z=False | x=True y=True z=True | x=True y=False z=True | x=False y=True z=True


@sg.function
def comparison_py():
    return (comparison(1, 2, 3), comparison(2, 1, 3), comparison(3, 2, 1), comparison(3, 1, 2),
            comparison(1, 3, 2), comparison(2, 3, 1))


@sg.function
def comparison_tf(x: sg.i32, y: sg.i32, z: sg.i32):
    return comparison(x, y, z)
# cases: comparison_tf x=1 y=2 z=3 | x=2 y=1 z=3 | x=3 y=2 z=1 | x=3 y=1 z=2 | x=1 y=3 z=2 | x=2 y=3 z=1


@sg.function
def equality_py():
    return (equality(1, 1), equality(1, 2), inequality(1, 1), inequality(1, 2), multiple_equality(1, 1, 2),
            multiple_equality(1, 1, 1))


@sg.function
def equality_tf(x: sg.i32, y: sg.i32, z: sg.i32):
    return equality(x, y), inequality(x, y), multiple_equality(x, y, z)
# cases: equality_tf x=1 y=1 z=2 | x=1 y=2 z=1 | x=1 y=1 z=1
