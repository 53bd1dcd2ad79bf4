"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_with_function_call_test.py
(Apache License 2.0): calls in a loop's test, target and body: module, local,
closure and lambda functions, a method, and builtins (tf.abs -> sg.abs).

Not ported: while_with_method_closure_call and for_with_method_closure_call (skipped
by the original). _py entries take Python inputs; _tf entries run-time i32 ones (a
list as a tensor with a symbolic length)."""
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


def _identity(x):
    return x


# test_for_with_range_call_in_target: l in (0, 1, 2) x (int, tensor) x (range, tf.range)
@sg.function
def for_with_range_call_in_target_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (for_with_call_in_target(n, range), for_with_call_in_target(n, sg.range))
    return r


@sg.function
def for_with_range_call_in_target_tf(n: sg.i32):
    return for_with_call_in_target(n, range), for_with_call_in_target(n, sg.range)
# cases: for_with_range_call_in_target_tf n=0 | n=1 | n=2




# test_while_with_call_in_cond and test_while_with_call with global_fn and abs (the
# lambda and method cases are in loop_with_function_call_lang.py)
@sg.function
def while_with_call_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_call_in_cond(n, global_fn), while_with_call_in_cond(n, abs), while_with_call(n, global_fn),
                 while_with_call(n, abs))
    return r


@sg.function
def while_with_call_tf(n: sg.i32):
    return (while_with_call_in_cond(n, global_fn), while_with_call_in_cond(n, abs), while_with_call(n, global_fn),
            while_with_call(n, abs))
# cases: while_with_call_tf n=0 | n=1 | n=2


# test_for_with_call_in_target (global_fn; tf.abs on tensors only) and test_for_with_call
@sg.function
def for_with_call_py():
    r = ()
    for l in ([], [1], [1, 2]):  # noqa: E741
        r = r + (for_with_call_in_target(l, global_fn), for_with_call(l, global_fn), for_with_call(l, abs))
    return r


@sg.function
def for_with_call_tf(l: sg.i32["L"]):  # noqa: E741
    return (for_with_call_in_target(l, global_fn), for_with_call_in_target(l, sg.abs), for_with_call(l, global_fn),
            for_with_call(l, abs))
# cases: for_with_call_tf l=[] | l=[1] | l=[1,2]


# test_for_with_range_call_in_target: l in (0, 1, 2) x (int, tensor) x (range, tf.range)
@sg.function
def for_with_range_call_in_target_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (for_with_call_in_target(n, range), for_with_call_in_target(n, sg.range))
    return r


@sg.function
def for_with_range_call_in_target_tf(n: sg.i32):
    return for_with_call_in_target(n, range), for_with_call_in_target(n, sg.range)
# cases: for_with_range_call_in_target_tf n=0 | n=1 | n=2


# local functions and closures
@sg.function
def local_calls_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_local_call_in_cond(n), while_with_local_call(n), while_with_closure_call(n))
    for l in ([], [1], [1, 2]):  # noqa: E741
        r = r + (for_with_local_call_in_target(l), for_with_local_call(l)) + for_with_closure_call(l)
    return r


@sg.function
def while_local_calls_tf(n: sg.i32):
    return while_with_local_call_in_cond(n), while_with_local_call(n), while_with_closure_call(n)
# cases: while_local_calls_tf n=0 | n=1 | n=2


@sg.function
def for_local_calls_tf(l: sg.i32["L"]):  # noqa: E741
    return (for_with_local_call_in_target(l), for_with_local_call(l)) + for_with_closure_call(l)
# cases: for_local_calls_tf l=[] | l=[1] | l=[1,2]
