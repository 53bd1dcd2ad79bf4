"""Ported from TensorFlow's tensorflow/python/autograph/tests/call_to_lambda_function_test.py
(Apache License 2.0): calls to lambdas, made inline and passed in."""
import stagegraph as sg


def inline_lambda(x):
    l = lambda x: x * x if x > 0 else -x  # noqa: E731, E741
    return l(x)


def external_lambda(x, l):  # noqa: E741
    return l(x)


@sg.function
def inline_lambda_py():
    return inline_lambda(1)


@sg.function
def inline_lambda_tf(x: sg.i32):
    return inline_lambda(x)
# cases: inline_lambda_tf x=1


@sg.function
def external_lambda_py():
    return external_lambda(1, lambda x: x == 0)


@sg.function
def external_lambda_tf(x: sg.i32):
    return external_lambda(x, lambda x: x == 0)
# cases: external_lambda_tf x=1
