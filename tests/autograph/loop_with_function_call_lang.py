"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/loop_with_function_call_test.py
(Apache License 2.0): the cases that call a lambda, a method of a class instance or a
lambda closure, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now). Helpers come from
loop_with_function_call.py's text (repeated here: a staged program imports only stagegraph).
"""
import stagegraph as sg


def while_with_call_in_cond(n, fn):
    i = 0
    s = 0
    while i < fn(n):
        s = s * 10 + i
        i += 1
    return s


def for_with_call_in_target(l, fn):  # noqa: E741
    s = 0
    for i in fn(l):
        s = s * 10 + i
    return s


def while_with_local_call_in_cond(n):
    def local_fn(x):
        return x * 3

    i = 0
    s = 0
    while i < local_fn(n):
        s = s * 10 + i
        i += 1
    return s


def for_with_local_call_in_target(l):  # noqa: E741
    def local_fn(l):  # noqa: E741
        return l * 1

    s = 0
    for i in local_fn(l):
        s = s * 10 + i
    return s


def while_with_call(n, fn):
    i = 0
    s = 0
    while i < n:
        s = s * 10 + fn(i)
        i += 1
    return s


def for_with_call(l, fn):  # noqa: E741
    s = 0
    for i in l:
        s = s * 10 + fn(i)
    return s


def while_with_local_call(n):
    def local_fn(x):
        return x * 3

    i = 0
    s = 0
    while i < n:
        s = s * 10 + local_fn(i)
        i += 1
    return s


def for_with_local_call(l):  # noqa: E741
    def local_fn(x):
        return x * 3

    s = 0
    for i in l:
        s = s * 10 + local_fn(i)
    return s


def while_with_closure_call(n):
    i = 0

    def i_via_closure():
        return i + 2

    i = 0
    s = 0
    while i < n:
        s = s * 10 + i_via_closure()
        i += 1
    return s


def for_with_closure_call(l):  # noqa: E741
    i = 0

    def i_via_closure():
        return i + 2

    s = 0
    for i in l:
        s = s * 10 + i_via_closure()
    return s, i


def global_fn(x):
    return x * 2


def while_with_lambda_closure_call(n):
    i = 0
    s = 0
    i_via_closure = lambda: i + 2  # noqa: E731
    while i < n:
        s = s * 10 + i_via_closure()
        i += 1
    return s


def for_with_lambda_closure_call(l):  # noqa: E741
    i = 0
    s = 0
    i_via_closure = lambda: i + 2  # noqa: E731
    for i in l:
        s = s * 10 + i_via_closure()
    return s, i


class TestClass(object):
    def method(self, x):
        return x * 4


# test_while_with_call_in_cond: n in (0, 1, 2) x (int, tf.constant) x
# (global_fn, lambda x: x * 1, TestClass().method, abs)
@sg.function
def while_with_call_in_cond_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_call_in_cond(n, global_fn), while_with_call_in_cond(n, lambda x: x * 1),
                 while_with_call_in_cond(n, TestClass().method), while_with_call_in_cond(n, abs))
    return r


@sg.function
def while_with_call_in_cond_tf(n: sg.i32):
    return (while_with_call_in_cond(n, global_fn), while_with_call_in_cond(n, lambda x: x * 1),
            while_with_call_in_cond(n, TestClass().method), while_with_call_in_cond(n, abs))
# cases: while_with_call_in_cond_tf n=0 | n=1 | n=2


# test_for_with_call_in_target: l in ([], [1], [1, 2]) x (list, tensor) x
# (global_fn, lambda, method, tf.abs); tf.abs of a list is skipped by the original.
@sg.function
def for_with_call_in_target_py():
    r = ()
    for l in ([], [1], [1, 2]):  # noqa: E741
        r = r + (for_with_call_in_target(l, global_fn), for_with_call_in_target(l, lambda x: x * 1),
                 for_with_call_in_target(l, TestClass().method))
    return r


@sg.function
def for_with_call_in_target_tf(l: sg.i32["L"]):  # noqa: E741
    return (for_with_call_in_target(l, global_fn), for_with_call_in_target(l, lambda x: x * 1),
            for_with_call_in_target(l, TestClass().method), for_with_call_in_target(l, sg.abs))
# cases: for_with_call_in_target_tf l=[] | l=[1] | l=[1,2]


# test_while_with_call: n in (0, 1, 2) x (int, tf.constant) x (global_fn, lambda, method, abs)
@sg.function
def while_with_call_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_call(n, global_fn), while_with_call(n, lambda x: x * 1),
                 while_with_call(n, TestClass().method), while_with_call(n, abs))
    return r


@sg.function
def while_with_call_tf(n: sg.i32):
    return (while_with_call(n, global_fn), while_with_call(n, lambda x: x * 1),
            while_with_call(n, TestClass().method), while_with_call(n, abs))
# cases: while_with_call_tf n=0 | n=1 | n=2


# test_for_with_call: l in ([], [1], [1, 2]) x (list, tensor) x (global_fn, lambda, method, abs)
@sg.function
def for_with_call_py():
    r = ()
    for l in ([], [1], [1, 2]):  # noqa: E741
        r = r + (for_with_call(l, global_fn), for_with_call(l, lambda x: x * 1),
                 for_with_call(l, TestClass().method), for_with_call(l, abs))
    return r


@sg.function
def for_with_call_tf(l: sg.i32["L"]):  # noqa: E741
    return (for_with_call(l, global_fn), for_with_call(l, lambda x: x * 1),
            for_with_call(l, TestClass().method), for_with_call(l, abs))
# cases: for_with_call_tf l=[] | l=[1] | l=[1,2]


@sg.function
def local_calls_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_local_call_in_cond(n), while_with_local_call(n), while_with_closure_call(n),
                 while_with_lambda_closure_call(n))
    for l in ([], [1], [1, 2]):  # noqa: E741
        r = r + (for_with_local_call_in_target(l), for_with_local_call(l)) + for_with_closure_call(l) \
            + for_with_lambda_closure_call(l)
    return r


@sg.function
def while_local_calls_tf(n: sg.i32):
    return (while_with_local_call_in_cond(n), while_with_local_call(n), while_with_closure_call(n),
            while_with_lambda_closure_call(n))
# cases: while_local_calls_tf n=0 | n=1 | n=2


@sg.function
def for_local_calls_tf(l: sg.i32["L"]):  # noqa: E741
    return (for_with_local_call_in_target(l), for_with_local_call(l)) + for_with_closure_call(l) \
        + for_with_lambda_closure_call(l)
# cases: for_local_calls_tf l=[] | l=[1] | l=[1,2]
