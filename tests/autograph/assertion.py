"""Ported from TensorFlow's tensorflow/python/autograph/tests/assertion_test.py
(Apache License 2.0): `assert` with a static and a staged test."""
import stagegraph as sg


def simple_assertion(x):
    assert x > 0
    return x


@sg.function
def simple_assertion_py():
    return simple_assertion(1)


@sg.function
def simple_assertion_py_fails():
    return simple_assertion(0)
# error: simple_assertion_py_fails assert


@sg.function
def simple_assertion_tf(x: sg.i32):
    return simple_assertion(x)
# cases: simple_assertion_tf x=1
# run-error: simple_assertion_tf x=0 ~ (?i)assert
