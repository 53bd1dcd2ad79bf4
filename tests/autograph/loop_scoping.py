"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_scoping_test.py
(Apache License 2.0): variables local to loops, and the loop target after the loop.

range -> range; tf.range -> sg.range where it is called by the loop (a staged loop),
sg.arange(n) where it is passed as a value (a tensor of run-time length); _int_tensor -> an i32 input with a
symbolic length. Not ported: the cases the original skips (for_with_lambda_iter and
the *_illegal_cases, all skipTest). _py entries take Python inputs, _tf run-time ones."""
import stagegraph as sg


def for_with_local_var(l):  # noqa: E741
    s = 0
    for i in l:
        x = i + 2
        s = s * 10 + x
    return s


def while_with_local_var(x):
    s = 0
    while x > 0:
        y = x + 2
        s = s * 10 + y
        x -= 1
    return s


def for_initializes_local_var(l):  # noqa: E741
    s = 0
    for i in l:
        if i == l[0]:
            x = 0
        else:
            x += 1
        s = s * 10 + x
    return s


def while_initializes_local_var(x):
    s = 0
    while x > 0:
        if x > 0:
            y = 0
        else:
            y += 1
        s = s * 10 + y
        x -= 1
    return s


def for_defines_var(l):  # noqa: E741
    for i in l:
        x = i + 2
    return x


def while_defines_var(x):
    while x > 0:
        y = x + 2
        x -= 1
    return y


def for_defines_iterate(n, fn):
    s = 0
    for i in fn(n):
        s = s * 10 + i
    return i, s


def for_reuses_iterate(n, fn):
    i = 7
    s = 0
    for i in fn(n):
        s = s * 10 + i
    return i, s


def for_alters_iterate(n, fn):
    i = 7
    s = 0
    for i in fn(n):
        i = 3 * i + 1
        s = s * 10 + i
    return i, s


def _identity(x):
    # _int_tensor of the original: the input is already an i32 tensor.
    return x


@sg.function
def for_with_local_var_py():
    return for_with_local_var([]), for_with_local_var([1]), for_with_local_var([1, 2])


@sg.function
def for_with_local_var_tf(l: sg.i32["L"]):  # noqa: E741
    return for_with_local_var(l)
# cases: for_with_local_var_tf l=[] | l=[1] | l=[1,2]


@sg.function
def for_with_local_var_range_py():
    return for_with_local_var(range(0)), for_with_local_var(range(1)), for_with_local_var(range(2))


@sg.function
def for_with_local_var_range_tf(n: sg.i32):
    return for_with_local_var(sg.arange(n))
# cases: for_with_local_var_range_tf n=0 | n=1 | n=2


@sg.function
def while_with_local_var_py():
    return while_with_local_var(0), while_with_local_var(1), while_with_local_var(2)


@sg.function
def while_with_local_var_tf(x: sg.i32):
    return while_with_local_var(x)
# cases: while_with_local_var_tf x=0 | x=1 | x=2


@sg.function
def for_initializes_local_var_py():
    return for_initializes_local_var([]), for_initializes_local_var([1]), for_initializes_local_var([1, 2])


@sg.function
def while_initializes_local_var_py():
    return while_initializes_local_var(0), while_initializes_local_var(1), while_initializes_local_var(2)


@sg.function
def for_defines_var_py():
    return for_defines_var([1]), for_defines_var([1, 2])


@sg.function
def while_defines_var_py():
    return while_defines_var(1), while_defines_var(2)


# test_for_defines_iterate_legal_cases: n in (1, 2) x (range, tf.range)
@sg.function
def for_defines_iterate_py():
    return for_defines_iterate(1, range) + for_defines_iterate(2, range)


# sg.range over a static n >= 1 is a staged loop that provably runs: i has its last value.
@sg.function
def for_defines_iterate_sg_range():
    return for_defines_iterate(1, sg.range) + for_defines_iterate(2, sg.range)


# test_for_defines_iterate_tf_range: AutoGraph deliberately returns (0, 0) for n = 0,
# where Python raises UnboundLocalError; so does the graph, at run time, naming i.
@sg.function
def for_defines_iterate_sg_range_zero():
    return for_defines_iterate(0, sg.range)
# run-error: for_defines_iterate_sg_range_zero ~ UnboundLocalError: cannot access local variable 'i'.*ran zero times


# test_for_reuses_iterate: l in ([], [1], [1, 2]) x (list, _int_tensor)
@sg.function
def for_reuses_iterate_py():
    return for_reuses_iterate([], list) + for_reuses_iterate([1], list) + for_reuses_iterate([1, 2], list)


@sg.function
def for_reuses_iterate_tf(l: sg.i32["L"]):  # noqa: E741
    return for_reuses_iterate(l, _identity)
# cases: for_reuses_iterate_tf l=[] | l=[1] | l=[1,2]


@sg.function
def for_reuses_iterate_range_py():
    return for_reuses_iterate(0, range) + for_reuses_iterate(1, range) + for_reuses_iterate(2, range)


@sg.function
def for_reuses_iterate_range_tf(n: sg.i32):
    return for_reuses_iterate(n, sg.range)
# cases: for_reuses_iterate_range_tf n=0 | n=1 | n=2


@sg.function
def for_alters_iterate_py():
    return for_alters_iterate([], list) + for_alters_iterate([1], list) + for_alters_iterate([1, 2], list)


@sg.function
def for_alters_iterate_tf(l: sg.i32["L"]):  # noqa: E741
    return for_alters_iterate(l, _identity)
# cases: for_alters_iterate_tf l=[] | l=[1] | l=[1,2]


@sg.function
def for_alters_iterate_range_py():
    return for_alters_iterate(0, range) + for_alters_iterate(1, range) + for_alters_iterate(2, range)


@sg.function
def for_alters_iterate_range_tf(n: sg.i32):
    return for_alters_iterate(n, sg.range)
# cases: for_alters_iterate_range_tf n=0 | n=1 | n=2
