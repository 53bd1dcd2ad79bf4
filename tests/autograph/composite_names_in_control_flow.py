"""Ported from TensorFlow's tensorflow/python/autograph/tests/composite_names_in_control_flow_test.py
(Apache License 2.0): dict and list items assigned in staged and static branches and loops.

_py entries take the original's Python inputs (bool(a), ints); _tf entries take the
tf.constant inputs at run time (i32). A list result is returned as a tuple."""
import stagegraph as sg


def if_basic_dict(a):
    x = {"a": a}

    if x["a"] > 0:
        x["b"] = 1
    else:
        x["b"] = -1
    return x


def if_basic_list(a):
    x = [a, 0]

    if x[0] > 0:
        x[1] = 1
    else:
        x[1] = -1
    return x


def if_imbalanced(a):
    x = {"a": a}

    if x["a"] > 0:
        x["b"] = 1
    return x


def else_imbalanced(a):
    x = {"a": a}

    if x["a"] > 0:
        pass
    else:
        x["b"] = 1
    return x


def if_imbalanced_nested(a):
    x = {"a": {"a": a}}

    if x["a"]["a"] > 0:
        x["a"]["b"] = 1
    return x


def else_imbalanced_nested(a):
    x = {"a": {"a": a}}

    if x["a"]["a"] > 0:
        pass
    else:
        x["a"]["b"] = 1
    return x


# Note: this is incorrect code. We test that the error message is clear about
# that.
def if_buggy(a):
    x = {"a": {"a": a}}

    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    else:
        x["b"]["a"] = -1
    return x


# Note: this is incorrect code. We test that the error message is clear about
# that.
def if_imbalanced_buggy(a):
    x = {"a": {"a": a}}

    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    return x


def while_basic_dict(x, a, b):
    y = {"a": a, "b": b}
    while x > 0:
        x -= 1
        y["a"] += 1
    return y


def while_basic_list(x, a, b):
    y = [a, b]
    while x > 0:
        x -= 1
        y[0] += 1
    return y


def while_state_only_dict(a, b):
    y = {"a": a, "b": b}
    while y["b"] <= 10:
        y["a"] += 1
        y["b"] *= 2
    return y


def while_state_only_list(a, b):
    y = [a, b]
    while y[1] <= 10:
        y[0] += 1
        y[1] *= 2
    return y


def while_imbalanced(b):
    y = {"b": b}
    while y["b"] <= 10:
        y["a"] = y["b"] + 1
        y["b"] *= 2
    return y


def for_basic_dict(n, x, a, b):
    y = {"a": a, "b": b}
    for i in range(n):
        x -= 1
        y["a"] += i
    return y


def for_basic_list(n, x, a, b):
    y = [a, b]
    for i in range(n):
        x -= 1
        y[0] += i
    return y


def for_state_only_dict(n, a, b):
    y = {"a": a, "b": b}
    for _ in range(n):
        y["a"] += 1
    return y


def for_state_only_list(n, a, b):
    y = [a, b]
    for _ in range(n):
        y[0] += 1
    return y


def for_imbalanced(n, x):
    y = {}
    for i in range(n):
        x -= i
        y["a"] = x
    return y


# test_if_basic: a in (0, 1) x (bool, tf.constant)
@sg.function
def if_basic_dict_py():
    return tuple(if_basic_dict(False).values()) + tuple(if_basic_dict(True).values())


@sg.function
def if_basic_dict_tf(a: sg.i32):
    return if_basic_dict(a)
# cases: if_basic_dict_tf a=0 | a=1


@sg.function
def if_basic_list_py():
    return tuple(if_basic_list(False)) + tuple(if_basic_list(True))


@sg.function
def if_basic_list_tf(a: sg.i32):
    return tuple(if_basic_list(a))
# cases: if_basic_list_tf a=0 | a=1


# test_if_imbalanced_legal: Python inputs 0 and 1
@sg.function
def if_imbalanced_py():
    return tuple(if_imbalanced(0).values()) + tuple(if_imbalanced(1).values())


@sg.function
def else_imbalanced_py():
    return tuple(else_imbalanced(0).values()) + tuple(else_imbalanced(1).values())


@sg.function
def if_imbalanced_nested_py():
    return tuple(if_imbalanced_nested(0)["a"].values()) + tuple(if_imbalanced_nested(1)["a"].values())


@sg.function
def else_imbalanced_nested_py():
    return tuple(else_imbalanced_nested(0)["a"].values()) + tuple(else_imbalanced_nested(1)["a"].values())


# test_if_imbalanced_illegal: a key added in one branch of a staged `if`
@sg.function
def if_imbalanced_tf(a: sg.i32):
    return if_imbalanced(a)
# error: if_imbalanced_tf 'b'


@sg.function
def else_imbalanced_tf(a: sg.i32):
    return else_imbalanced(a)
# error: else_imbalanced_tf 'b'


@sg.function
def if_imbalanced_nested_tf(a: sg.i32):
    return if_imbalanced_nested(a)["a"]
# error: if_imbalanced_nested_tf 'b'


@sg.function
def else_imbalanced_nested_tf(a: sg.i32):
    return else_imbalanced_nested(a)["a"]
# error: else_imbalanced_nested_tf 'b'


@sg.function
def if_buggy_py():
    return if_buggy(1)["a"]
# error: if_buggy_py 'b'


@sg.function
def if_buggy_tf(a: sg.i32):
    return if_buggy(a)["a"]
# error: if_buggy_tf 'b'


@sg.function
def if_imbalanced_buggy_py():
    return if_imbalanced_buggy(1)["a"]
# error: if_imbalanced_buggy_py 'b'


@sg.function
def if_imbalanced_buggy_tf(a: sg.i32):
    return if_imbalanced_buggy(a)["a"]
# error: if_imbalanced_buggy_tf 'b'


# test_while_basic: x in (0, 1, 2) x (bool, tf.constant), a in (3, 7), b = 0
@sg.function
def while_basic_dict_py():
    r = ()
    for x in (0, 1, 2):
        for a in (3, 7):
            r = r + tuple(while_basic_dict(bool(x), a, 0).values())
    return r


@sg.function
def while_basic_dict_tf(x: sg.i32):
    y3 = while_basic_dict(x, 3, 0)
    y7 = while_basic_dict(x, 7, 0)
    return y3["a"], y3["b"], y7["a"], y7["b"]
# cases: while_basic_dict_tf x=0 | x=1 | x=2


@sg.function
def while_basic_list_py():
    r = ()
    for x in (0, 1, 2):
        for a in (3, 7):
            r = r + tuple(while_basic_list(bool(x), a, 0))
    return r


@sg.function
def while_basic_list_tf(x: sg.i32):
    return tuple(while_basic_list(x, 3, 0)) + tuple(while_basic_list(x, 7, 0))
# cases: while_basic_list_tf x=0 | x=1 | x=2


# test_while_state_only: a = 0, b in (3, 4, 5, 6) x (bool, tf.constant)
@sg.function
def while_state_only_dict_py():
    r = ()
    for b in (3, 4, 5, 6):
        r = r + tuple(while_state_only_dict(0, bool(b)).values())
    return r


@sg.function
def while_state_only_dict_tf(b: sg.i32):
    return while_state_only_dict(0, b)
# cases: while_state_only_dict_tf b=3 | b=4 | b=5 | b=6


@sg.function
def while_state_only_list_py():
    r = ()
    for b in (3, 4, 5, 6):
        r = r + tuple(while_state_only_list(0, bool(b)))
    return r


@sg.function
def while_state_only_list_tf(b: sg.i32):
    return tuple(while_state_only_list(0, b))
# cases: while_state_only_list_tf b=3 | b=4 | b=5 | b=6


# test_while_imbalanced_legal: b in (5, 10, 11) x (int, tf.constant)
@sg.function
def while_imbalanced_py():
    return (tuple(while_imbalanced(5).values()) + tuple(while_imbalanced(10).values())
            + tuple(while_imbalanced(11).values()))


# AutoGraph accepts b = 5 and 10 and fails at run time for 11 ("loop must iterate at
# least once to initialize y['a']"), as this does: the graph's dict has the key the
# loop adds, so a run whose loop never assigned it stops after the loop.
@sg.function
def while_imbalanced_tf(b: sg.i32):
    return while_imbalanced(b)
# cases: while_imbalanced_tf b=5 | b=10
# autograph-run-error: while_imbalanced_tf b=11 ~ (?m)composite_names_in_control_flow\.py:121:5: error: assertion failed: KeyError: 'a': the staged while loop at line 121 adds the key 'a' to dict 'y', and no iteration assigned it


# test_for_basic: n in (0, 1, 2) x (bool, tf.constant); x, a, b = 1
@sg.function
def for_basic_dict_py():
    return (tuple(for_basic_dict(False, 1, 1, 1).values()) + tuple(for_basic_dict(True, 1, 1, 1).values())
            + tuple(for_basic_dict(bool(2), 1, 1, 1).values()))


@sg.function
def for_basic_dict_tf(n: sg.i32):
    return for_basic_dict(n, 1, 1, 1)
# cases: for_basic_dict_tf n=0 | n=1 | n=2


@sg.function
def for_basic_list_py():
    return tuple(for_basic_list(False, 1, 1, 1)) + tuple(for_basic_list(True, 1, 1, 1))


@sg.function
def for_basic_list_tf(n: sg.i32):
    return tuple(for_basic_list(n, 1, 1, 1))
# cases: for_basic_list_tf n=0 | n=1 | n=2


# test_for_state_only: n in (0, 1, 2) x (bool, tf.constant); a, b = 1
@sg.function
def for_state_only_dict_py():
    return tuple(for_state_only_dict(False, 1, 1).values()) + tuple(for_state_only_dict(True, 1, 1).values())


@sg.function
def for_state_only_dict_tf(n: sg.i32):
    return for_state_only_dict(n, 1, 1)
# cases: for_state_only_dict_tf n=0 | n=1 | n=2


@sg.function
def for_state_only_list_py():
    return tuple(for_state_only_list(False, 1, 1)) + tuple(for_state_only_list(True, 1, 1))


@sg.function
def for_state_only_list_tf(n: sg.i32):
    return tuple(for_state_only_list(n, 1, 1))
# cases: for_state_only_list_tf n=0 | n=1 | n=2


# test_for_imbalanced_legal: n in (0, 1, 2) x (int, tf.constant); x = 0
@sg.function
def for_imbalanced_py():
    return len(for_imbalanced(0, 0)), for_imbalanced(1, 0)["a"], for_imbalanced(2, 0)["a"]


# AutoGraph accepts n = 1 and 2 and fails at run time for 0, as this does.
@sg.function
def for_imbalanced_tf(n: sg.i32):
    return for_imbalanced(n, 0)
# cases: for_imbalanced_tf n=1 | n=2
# autograph-run-error: for_imbalanced_tf n=0 ~ KeyError: 'a': the staged for loop at line 159 adds the key 'a' to dict 'y'
