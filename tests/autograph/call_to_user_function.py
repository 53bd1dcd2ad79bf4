"""Ported from TensorFlow's tensorflow/python/autograph/tests/call_to_user_function_test.py
(Apache License 2.0): calls through function variables, parameters and factories
(tf.identity -> sg.transpose, the identity on a scalar)."""
import stagegraph as sg


def function_1(x):
    return x * x * x


def function_2(x):
    return -1 * x + 11


def factory(n):
    if n == 1:
        return function_1
    return function_2


def static_fn(x):
    a = function_1(x)
    b = function_2(x)
    return a + b


def factory_dynamic_fn(x):
    f = factory(1)
    a = f(x)
    f = factory(2)
    b = f(x)
    return a + b


def param_dynamic_fn(f, x):
    return f(x)


def variable_dynamic_fn(x):
    f = function_1
    a = f(x)
    f = function_2
    b = f(x)
    return a + b


def variable_dynamic_whitelisted_fn(x):
    f = sg.transpose
    return f(x)


def dynamic_fn_with_kwargs(f, x):
    return f(x=x)


@sg.function
def static_fn_py():
    return static_fn(1)


@sg.function
def static_fn_tf(x: sg.i32):
    return static_fn(x)
# cases: static_fn_tf x=1


@sg.function
def factory_dynamic_fn_py():
    return factory_dynamic_fn(1)


@sg.function
def factory_dynamic_fn_tf(x: sg.i32):
    return factory_dynamic_fn(x)
# cases: factory_dynamic_fn_tf x=1


@sg.function
def param_dynamic_fn_py():
    return param_dynamic_fn(function_1, 1)


@sg.function
def param_dynamic_fn_tf(x: sg.i32):
    return param_dynamic_fn(function_1, x)
# cases: param_dynamic_fn_tf x=1


@sg.function
def variable_dynamic_fn_py():
    return variable_dynamic_fn(1)


@sg.function
def variable_dynamic_fn_tf(x: sg.i32):
    return variable_dynamic_fn(x)
# cases: variable_dynamic_fn_tf x=1


@sg.function
def variable_dynamic_whitelisted_fn_py():
    return variable_dynamic_whitelisted_fn(1)


@sg.function
def variable_dynamic_whitelisted_fn_tf(x: sg.i32):
    return variable_dynamic_whitelisted_fn(x)
# cases: variable_dynamic_whitelisted_fn_tf x=1


@sg.function
def dynamic_fn_with_kwargs_py():
    return dynamic_fn_with_kwargs(function_1, 1)


@sg.function
def dynamic_fn_with_kwargs_tf(x: sg.i32):
    return dynamic_fn_with_kwargs(function_1, x)
# cases: dynamic_fn_with_kwargs_tf x=1
