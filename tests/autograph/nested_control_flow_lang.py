"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/nested_control_flow_test.py (Apache License 2.0):
the functions that need `try`, `raise` and `global`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
"""
import stagegraph as sg


def _hidden_raise():
    raise ValueError('exception used for control flow')


def if_with_local_modification_masked_by_exception(x):
    y = 0
    if x > 0:
        try:
            if x > 1:
                _hidden_raise()
            y = 1
        except ValueError:
            pass
        if y == 0:
            y = 2
    return y


_test_global = None


def if_nested_with_modification_of_global(x):
    y = 0
    if x > 0:
        if x > 0:
            global _test_global
            if _test_global is None:
                _test_global = 1
            else:
                _test_global += 1
            y += _test_global
    return y


def while_continue_in_try(x):
    z = 0
    while x > 0:
        x = x - 1
        try:
            if x < 5:
                continue
            z = z + 1
        finally:
            z = z + 10
    return z


def while_break_in_try(x):
    z = 0
    while x > 0:
        x = x - 1
        try:
            if x < 5:
                break
            z = z + 1
        finally:
            z = z + 10
    return z


@sg.function
def if_with_local_modification_masked_by_exception_py():
    return (if_with_local_modification_masked_by_exception(-1), if_with_local_modification_masked_by_exception(0),
            if_with_local_modification_masked_by_exception(1), if_with_local_modification_masked_by_exception(2))


@sg.function
def if_nested_with_modification_of_global_py():
    return if_nested_with_modification_of_global(1)


@sg.function
def while_continue_in_try_py():
    return while_continue_in_try(0), while_continue_in_try(4), while_continue_in_try(10)


@sg.function
def while_continue_in_try_tf(x: sg.i32):
    return while_continue_in_try(x)
# cases: while_continue_in_try_tf x=0 | x=4 | x=10


@sg.function
def while_break_in_try_py():
    return while_break_in_try(0), while_break_in_try(4), while_break_in_try(10)


@sg.function
def while_break_in_try_tf(x: sg.i32):
    return while_break_in_try(x)
# cases: while_break_in_try_tf x=0 | x=4 | x=10
