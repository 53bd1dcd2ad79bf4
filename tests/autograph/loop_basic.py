"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_basic_test.py
(Apache License 2.0): while and for loops over Python values and tensors.

Not ported: while_no_vars and for_no_vars (tf.Variable), the tf.data variants, and
nested_for_loops over ragged tensors. A tf.TensorArray is a list appended to
(`l.write(i, s)` at i = its length is `l.append(s)`; `l.stack()` is _stack_list).
_py entries take the original's Python inputs (int, list); _tf entries take the
tf.constant inputs at run time (i32; a list becomes an i32["L"] tensor, so the loop
over it is staged)."""
import stagegraph as sg


def _stack_list(l, dtype):  # noqa: E741
    # TensorArray.stack(): an empty array stacks to shape [0].
    return sg.stack(l) if len(l) > 0 else sg.zeros((0,), dtype=dtype)


def while_one_var(n):
    i = 0
    while i < n:
        i = i * 10 + 1
    return i


def for_one_var(l):  # noqa: E741
    i = 0
    for i in l:
        pass
    return i


def while_two_vars(n):
    s = 0
    i = 0
    while i < n:
        s = s * 10 + i
        i += 1
    return s


def for_two_vars(l):  # noqa: E741
    s = 0
    for i in l:
        s = s * 10 + i
    return s


def while_creates_var(n):
    i = 0
    while i < n:
        i = n + 1
        j = i + 1
    return i, j


def for_creates_var(l):  # noqa: E741
    for i in l:
        pass
    return i


def successive_while_loops(n1, n2):
    s = 0
    i = 0
    while i < n1:
        s = s * 10 + i
        i += 1
    i = 0
    while i < n2:
        s = s * 10 + i
        i += 1
    return s


def successive_for_loops(l1, l2):
    s = 0
    for i in l1:
        s = s * 10 + i
    for i in l2:
        s = s * 10 + i
    return s


def nested_while_loops(n1, n2):
    i = 0
    l = []  # noqa: E741
    while i < n1:
        j = 0
        s = 0
        while j < n2:
            s = s * 10 + i * j
            j += 1
        l.append(s)
        i += 1
    return _stack_list(l, sg.i64)


def nested_for_loops(m):
    l = []  # noqa: E741
    for i in m:
        s = 0
        for j in i:
            s = s * 10 + j
        l.append(s)
    return _stack_list(l, sg.i32)


@sg.function
def while_one_var_py():
    return while_one_var(0), while_one_var(1), while_one_var(2)


@sg.function
def while_one_var_tf(n: sg.i32):
    return while_one_var(n)
# cases: while_one_var_tf n=0 | n=1 | n=2


@sg.function
def for_one_var_py():
    return for_one_var([]), for_one_var([1]), for_one_var([1, 2])


@sg.function
def for_one_var_tf(l: sg.i32["L"]):  # noqa: E741
    return for_one_var(l)
# cases: for_one_var_tf l=[] | l=[1] | l=[1,2]


@sg.function
def while_two_vars_py():
    return while_two_vars(0), while_two_vars(1), while_two_vars(2)


@sg.function
def while_two_vars_tf(n: sg.i32):
    return while_two_vars(n)
# cases: while_two_vars_tf n=0 | n=1 | n=2


@sg.function
def for_two_vars_py():
    return for_two_vars([]), for_two_vars([1]), for_two_vars([1, 2])


@sg.function
def for_two_vars_tf(l: sg.i32["L"]):  # noqa: E741
    return for_two_vars(l)
# cases: for_two_vars_tf l=[] | l=[1] | l=[1,2]


@sg.function
def while_creates_var_py():
    return while_creates_var(1) + while_creates_var(2)


# AutoGraph accepts n = 1, 2 and fails at run time for 0 ("loop must iterate at
# least once"); so does Python (UnboundLocalError). j, first assigned inside the
# staged loop, is carried from its first iteration with a defined flag.
@sg.function
def while_creates_var_tf(n: sg.i32):
    return while_creates_var(n)
# cases: while_creates_var_tf n=1 | n=2
# run-error: while_creates_var_tf n=0 ~ (?m)loop_basic\.py:53:15: error: assertion failed: UnboundLocalError: cannot access local variable 'j' where it is not associated with a value: the staged while loop at line 50 ran zero times$


@sg.function
def while_creates_var_py_zero():
    return while_creates_var(0)
# error: while_creates_var_py_zero 'j'


@sg.function
def for_creates_var_py():
    return for_creates_var([1]), for_creates_var([1, 2])


# A tensor of static length is iterated at compile time, as a list is.
@sg.function
def for_creates_var_tf_static(l1: sg.i32[1], l2: sg.i32[2]):
    return for_creates_var(l1), for_creates_var(l2)
# cases: for_creates_var_tf_static l1=[1] l2=[1,2]


# Over a run-time length the loop may run zero times and i has no value before it:
# reading i fails at run time for an empty tensor, as in AutoGraph and Python.
@sg.function
def for_creates_var_tf(l: sg.i32["L"]):  # noqa: E741
    return for_creates_var(l)
# cases: for_creates_var_tf l=[1] | l=[1,2]
# run-error: for_creates_var_tf l=[] ~ (?m)loop_basic\.py:59:12: error: assertion failed: UnboundLocalError: cannot access local variable 'i' where it is not associated with a value: the staged for loop at line 57 ran zero times$


@sg.function
def for_creates_var_py_empty():
    return for_creates_var([])
# error: for_creates_var_py_empty 'i'


@sg.function
def successive_while_loops_py():
    r = ()
    for n1 in (0, 1, 2):
        for n2 in (0, 1, 2):
            r = r + (successive_while_loops(n1, n2),)
    return r


@sg.function
def successive_while_loops_tf(n1: sg.i32, n2: sg.i32):
    return successive_while_loops(n1, n2)
# cases: successive_while_loops_tf n1=0 n2=0 | n1=0 n2=2 | n1=1 n2=1 | n1=2 n2=0 | n1=2 n2=2 | n1=1 n2=2


@sg.function
def successive_for_loops_py():
    r = ()
    for l1 in ([], [1], [1, 2]):
        for l2 in ([], [1], [1, 2]):
            r = r + (successive_for_loops(l1, l2),)
    return r


@sg.function
def successive_for_loops_tf(l1: sg.i32["A"], l2: sg.i32["B"]):
    return successive_for_loops(l1, l2)
# cases: successive_for_loops_tf l1=[] l2=[] | l1=[] l2=[1,2] | l1=[1] l2=[1] | l1=[1,2] l2=[] | l1=[1,2] l2=[1,2]


@sg.function
def nested_while_loops_py():
    return nested_while_loops(1, 2), nested_while_loops(2, 2), nested_while_loops(2, 0), nested_while_loops(0, 2)


@sg.function
def nested_while_loops_tf(n1: sg.i32, n2: sg.i32):
    return nested_while_loops(n1, n2)
# cases: nested_while_loops_tf n1=0 n2=0 | n1=0 n2=2 | n1=1 n2=1 | n1=2 n2=0 | n1=2 n2=2 | n1=2 n2=1


@sg.function
def nested_for_loops_tf(m: sg.i32["A", "B"]):
    return nested_for_loops(m)
# cases: nested_for_loops_tf m=[[]] | m=[[],[]] | m=[[1]] | m=[[1],[2]] | m=[[1,2]] | m=[[1,2],[3,4]]


@sg.function
def nested_for_loops_mixed_list():
    m = [[], sg.zeros((0,), dtype=sg.i32), [1], sg.full((1,), 1, dtype=sg.i32), [1, 2]]
    return nested_for_loops(m)


@sg.function
def nested_for_loops_py():
    return nested_for_loops([[]]), nested_for_loops([[], [1]]), nested_for_loops([[], [1], [1, 2]])
