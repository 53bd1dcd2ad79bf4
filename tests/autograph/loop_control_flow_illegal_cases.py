"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_control_flow_illegal_cases_test.py
(Apache License 2.0): break and return on a tensor condition inside a Python loop.

AutoGraph refuses these ("not supported in Python for", "condition of while loop
started as non-Tensor, then changed to Tensor"). tf.greater(c % 2, 0) of a Python c is
a graph tensor there; its translation `sg.full((), c % 2, dtype=sg.i32) > 0` is a
static tensor here, so with the original's Python inputs the loops run at compile
time and give Python's result (_py). The _tf entries make the condition staged: the
list is a tensor of static length (a loop unrolled at compile time with a staged break
or return), and x a run-time number."""
import stagegraph as sg


def tf_break_in_py_for(l):  # noqa: E741
    s = 0
    for c in l:
        if sg.full((), c % 2, dtype=sg.i32) > 0:
            break
        s += c
    return s


def tf_return_in_py_for(l):  # noqa: E741
    s = 0
    for c in l:
        if sg.full((), c % 2, dtype=sg.i32) > 0:
            return s
        else:
            return s
        s += c
    return s


def tf_break_in_py_while(x):
    s = 0
    while x > 0:
        x -= 1
        if sg.full((), x % 2, dtype=sg.i32) > 0:
            break
        s += x
    return s


def tf_return_in_py_while(x):
    s = 0
    while x > 0:
        x -= 1
        if sg.full((), x % 2, dtype=sg.i32) > 0:
            return s
        else:
            return s
        s += x
    return s


@sg.function
def control_flow_in_py_for_py():
    r = ()
    for l in ([1], [1, 2], [1, 2, 3]):  # noqa: E741
        r = r + (tf_break_in_py_for(l), tf_return_in_py_for(l))
    return r


@sg.function
def control_flow_in_py_for_tf(l1: sg.i32[1], l2: sg.i32[2], l3: sg.i32[3]):
    return (tf_break_in_py_for(l1), tf_return_in_py_for(l1), tf_break_in_py_for(l2), tf_return_in_py_for(l2),
            tf_break_in_py_for(l3), tf_return_in_py_for(l3))
# cases: control_flow_in_py_for_tf l1=[1] l2=[1,2] l3=[1,2,3] | l1=[2] l2=[2,4] l3=[2,3,4]


@sg.function
def control_flow_in_py_while_py():
    r = ()
    for n in (1, 2, 3):
        r = r + (tf_break_in_py_while(n), tf_return_in_py_while(n))
    return r


@sg.function
def control_flow_in_py_while_tf(n: sg.i32):
    return tf_break_in_py_while(n), tf_return_in_py_while(n)
# cases: control_flow_in_py_while_tf n=1 | n=2 | n=3
