"""Ported from TensorFlow's tensorflow/python/autograph/tests/cond_basic_test.py
(Apache License 2.0): `if` creating, changing and deleting variables, static and staged.

Not ported: if_no_vars and if_else_no_vars (they update a tf.Variable).
_py entries take the original's Python inputs; _tf entries take tf.constant inputs
at run time (ints as i32, bools as bool)."""
import stagegraph as sg


def if_one_var(n):
    i = 0
    if i < n:
        i += 1
    return i


def if_else_one_var(n):
    i = 0
    if i < n:
        i += 1
    else:
        i += 2
    return i


def if_two_vars(n):
    i = 0
    j = 1
    if i < n:
        i += 1
        j *= 10
    return i, j


def if_else_two_vars(n):
    i = 0
    j = 1
    if i < n:
        i += 1
        j *= 10
    else:
        i += 2
        j *= 20
    return i, j


def if_creates_var(c):
    if c:
        i = 1
    return i


def if_else_creates_var(c):
    if c:
        i = 1
    else:
        i = 2
    return i


def else_creates_var(c):
    if c:
        pass
    else:
        i = 2
    return i


def if_returns_none(c):
    i = 0
    j = 1
    if c:
        i = None
        j = 2
    return i, j


def if_else_returns_none(c):
    if c:
        i = None
        j = 1
    else:
        i = None
        j = 2
    return i, j


def else_returns_none(c):
    i = 1
    j = 1
    if c:
        pass
    else:
        i = None
        j = 2
    return i, j


def if_local_var(c):
    i = 0
    if c:
        j = 1
        i = j + 1
    return i


def if_else_local_var(c):
    i = 0
    if c:
        j = 1
    else:
        j = 2
        i = j + 1
    return i


def if_locally_modified_var(c):
    i = 0
    j = 2
    if c:
        j = j + 1
        i = j + 1
    return i


def successive_ifs(n1, n2):
    s = 0
    i = 0
    if i < n1:
        s = s * 10 + i
        i += 1
    i = 0
    if i < n2:
        s = s * 10 + i
        i += 1
    return s


def successive_if_elses(n1, n2):
    s = 0
    i = 0
    if i < n1:
        s = s * 10 + i
        i += 1
    else:
        s = s * 11 + i
        i += 2
    i = 0
    if i < n2:
        s = s * 10 + i
        i += 1
    else:
        s = s * 11 + i
        i += 2
    return s


def nested_ifs(n1, n2):
    i = 0
    l = 0  # noqa: E741
    if i < n1:
        j = 0
        s = 0
        if j < n2:
            s = s * 10 + i * j
            j += 1
        l = l * 1000 + s  # noqa: E741
        i += 1
    return l


def nested_if_temporarily_undefined_return(c1, c2):
    if c1:
        if c2:
            return 1
    return 2


def nested_if_elses(n1, n2):
    i = 0
    l = 0  # noqa: E741
    if i < n1:
        j = 0
        s = 0
        if j < n2:
            s = s * 10 + i * j
            j += 1
        else:
            s = s * 11 + i * j
            j += 2
        l = l * 1000 + s  # noqa: E741
        i += 1
    else:
        j = 0
        s = 0
        if j < n2:
            s = s * 12 + i * j
            j += 3
        else:
            s = s * 13 + i * j
            j += 4
        l = l * 2000 + s  # noqa: E741
        i += 1
    return l


# test_several_vars: n in (0, 1) x (int, tf.constant)
@sg.function
def several_vars_py():
    return (if_one_var(0), if_one_var(1), if_else_one_var(0), if_else_one_var(1)) + if_two_vars(0) \
        + if_two_vars(1) + if_else_two_vars(0) + if_else_two_vars(1)


@sg.function
def several_vars_tf(n: sg.i32):
    return (if_one_var(n), if_else_one_var(n)) + if_two_vars(n) + if_else_two_vars(n)
# cases: several_vars_tf n=0 | n=1


# test_var_lifetime_imbalanced_legal
@sg.function
def var_lifetime_imbalanced_legal_py():
    return if_creates_var(True), else_creates_var(False)


# test_if_else_var_lifetime: c in (True, False) x (int, tf.constant)
@sg.function
def if_else_creates_var_py():
    return if_else_creates_var(1), if_else_creates_var(0)


@sg.function
def if_else_creates_var_tf(c: sg.bool):
    return if_else_creates_var(c)
# cases: if_else_creates_var_tf c=True | c=False


# test_creates_var_imbalanced_illegal
@sg.function
def if_creates_var_py_false():
    return if_creates_var(False)
# error: if_creates_var_py_false 'i'


@sg.function
def if_creates_var_tf(c: sg.bool):
    return if_creates_var(c)
# cases: if_creates_var_tf c=True
# run-error: if_creates_var_tf c=False ~ (?m)cond_basic\.py:50:12: error: assertion failed: UnboundLocalError: cannot access local variable 'i' where it is not associated with a value: the staged `if` at line 48 ran its else branch, which does not assign it$


@sg.function
def else_creates_var_py_true():
    return else_creates_var(True)
# error: else_creates_var_py_true 'i'


@sg.function
def else_creates_var_tf(c: sg.bool):
    return else_creates_var(c)
# cases: else_creates_var_tf c=False
# run-error: else_creates_var_tf c=True ~ UnboundLocalError: cannot access local variable 'i'.*the staged `if` at line 62 ran its then branch


# test_returns_none_legal (None is not a tensor: each entry returns whether i is None)
@sg.function
def returns_none_legal_py():
    i1, j1 = if_returns_none(True)
    i2, j2 = if_else_returns_none(False)
    i3, j3 = else_returns_none(False)
    return i1 is None, j1, i2 is None, j2, i3 is None, j3


# test_returns_none_illegal: None in one branch of a staged `if`, a number in the other
@sg.function
def if_returns_none_tf(c: sg.bool):
    i, j = if_returns_none(c)
    return j
# error: if_returns_none_tf 'i'


@sg.function
def else_returns_none_tf(c: sg.bool):
    i, j = else_returns_none(c)
    return j
# error: else_returns_none_tf 'i'


# Both branches set i to None: legal here (i is None on every path), as in Python.
@sg.function
def if_else_returns_none_tf(c: sg.bool):
    i, j = if_else_returns_none(c)
    return i is None, j
# cases: if_else_returns_none_tf c=True | c=False


# test_local_vars: c in (True, False) x (bool, tf.constant)
@sg.function
def local_vars_py():
    return (if_local_var(True), if_local_var(False), if_else_local_var(True), if_else_local_var(False),
            if_locally_modified_var(True), if_locally_modified_var(False))


@sg.function
def local_vars_tf(c: sg.bool):
    return if_local_var(c), if_else_local_var(c), if_locally_modified_var(c)
# cases: local_vars_tf c=True | c=False


# test_nested_if_temporarily_undefined_return_legal: Python c1, c2
@sg.function
def nested_if_temporarily_undefined_return_py():
    return (nested_if_temporarily_undefined_return(True, True), nested_if_temporarily_undefined_return(True, False),
            nested_if_temporarily_undefined_return(False, True), nested_if_temporarily_undefined_return(False, False))


# AutoGraph refuses staged c1, c2 ("must also have a return"); a `return` inside a
# staged branch is lowered to a flag here, so it is legal and gives Python's result.
@sg.function
def nested_if_temporarily_undefined_return_tf(c1: sg.bool, c2: sg.bool):
    return nested_if_temporarily_undefined_return(c1, c2)
# cases: nested_if_temporarily_undefined_return_tf c1=True c2=True | c1=True c2=False | c1=False c2=True | c1=False c2=False


# test_composition: n1, n2 in (0, 1) x (bool, tf.constant)
@sg.function
def composition_py():
    r = ()
    for n1 in (0, 1):
        for n2 in (0, 1):
            r = r + (successive_ifs(bool(n1), bool(n2)), successive_if_elses(bool(n1), bool(n2)),
                     nested_ifs(bool(n1), bool(n2)), nested_if_elses(bool(n1), bool(n2)))
    return r


@sg.function
def composition_tf(n1: sg.i32, n2: sg.i32):
    return successive_ifs(n1, n2), successive_if_elses(n1, n2), nested_ifs(n1, n2), nested_if_elses(n1, n2)
# cases: composition_tf n1=0 n2=0 | n1=0 n2=1 | n1=1 n2=0 | n1=1 n2=1


@sg.function
def composition_tf_py(n1: sg.i32):
    r = ()
    for n2 in (False, True):
        r = r + (successive_ifs(n1, n2), successive_if_elses(n1, n2), nested_ifs(n1, n2), nested_if_elses(n1, n2))
    return r
# cases: composition_tf_py n1=0 | n1=1
