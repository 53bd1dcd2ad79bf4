"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_created_variables_test.py
(Apache License 2.0): loops that create the variable they return.

tf.zeros/tf.ones -> sg.zeros/sg.ones (f32); tf.range -> sg.arange;
tf.random.uniform((), i, i + 1, tf.int32), which is always i, -> i.
With Python n (_py) the loop runs at compile time; with n = 0 the variable is
undefined, an error naming it (Python: UnboundLocalError). With a run-time n (_tf)
AutoGraph accepts n >= 1 and fails at run time for 0, and so does Stagegraph: a
variable first assigned inside a staged loop is carried from its first iteration
with a defined flag, checked where it is read (a run-time UnboundLocalError naming
it and the loop); a dict created there is carried leaf by leaf. A changing rank
stays refused."""
import stagegraph as sg


def while_creates_var_static_shape(n):
    i = 0
    while i < n:
        v = sg.zeros([1, 2, 3])
        i += 1
    return v


def while_creates_var_dynamic_shape(n):
    i = 0
    while i < n:
        v = sg.zeros([1, i, 2])
        i += 1
    return v


def while_creates_var_dynamic_rank(n):
    i = 0
    while i < n:
        v = sg.zeros(sg.arange(i))
        i += 1
    return v


def while_creates_var_dynamic_shape_py_init_var(n):
    i = 0
    while i < n:
        v = sg.arange(i)
        i += 1
    return v


def while_creates_nested_var_static_shape(n):
    i = 0
    while i < n:
        v = {"a": sg.zeros([1, 2, 3]), "b": sg.ones([1, 2, 3])}
        i += 1
    return v["a"], v["b"]


def while_creates_nested_var_dynamic_shape(n):
    i = 0
    while i < n:
        v = {
            "a": sg.zeros([1, i]),
            "b": sg.ones([i, 2]),
        }
        i += 1
    return v["a"], v["b"]


def while_creates_nested_var_dynamic_rank(n):
    i = 0
    while i < n:
        v = {
            "a": sg.ones(sg.arange(i)),
            "b": sg.ones([1, 2, 3]),
        }
        i += 1
    return v["a"], v["b"]


@sg.function
def while_creates_var_static_shape_py():
    return while_creates_var_static_shape(1), while_creates_var_static_shape(2)


@sg.function
def while_creates_var_dynamic_shape_py():
    return while_creates_var_dynamic_shape(1), while_creates_var_dynamic_shape(2)


@sg.function
def while_creates_var_dynamic_rank_py():
    return while_creates_var_dynamic_rank(1), while_creates_var_dynamic_rank(2)


@sg.function
def while_creates_var_dynamic_shape_py_init_var_py():
    return while_creates_var_dynamic_shape_py_init_var(1), while_creates_var_dynamic_shape_py_init_var(2)


@sg.function
def while_creates_nested_var_static_shape_py():
    return while_creates_nested_var_static_shape(1) + while_creates_nested_var_static_shape(2)


@sg.function
def while_creates_nested_var_dynamic_shape_py():
    return while_creates_nested_var_dynamic_shape(1) + while_creates_nested_var_dynamic_shape(2)


@sg.function
def while_creates_nested_var_dynamic_rank_py():
    return while_creates_nested_var_dynamic_rank(1) + while_creates_nested_var_dynamic_rank(2)


@sg.function
def while_creates_var_static_shape_py_zero():
    return while_creates_var_static_shape(0)
# error: while_creates_var_static_shape_py_zero 'v'


@sg.function
def while_creates_nested_var_static_shape_py_zero():
    return while_creates_nested_var_static_shape(0)
# error: while_creates_nested_var_static_shape_py_zero 'v'


@sg.function
def while_creates_var_static_shape_tf(n: sg.i32):
    return while_creates_var_static_shape(n)
# cases: while_creates_var_static_shape_tf n=1 | n=2
# run-error: while_creates_var_static_shape_tf n=0 ~ UnboundLocalError: cannot access local variable 'v'.*ran zero times


@sg.function
def while_creates_var_dynamic_shape_tf(n: sg.i32):
    return while_creates_var_dynamic_shape(n)
# cases: while_creates_var_dynamic_shape_tf n=1 | n=2
# run-error: while_creates_var_dynamic_shape_tf n=0 ~ UnboundLocalError: cannot access local variable 'v'.*ran zero times


@sg.function
def while_creates_var_dynamic_rank_tf(n: sg.i32):
    return while_creates_var_dynamic_rank(n)
# refused: while_creates_var_dynamic_rank_tf .


@sg.function
def while_creates_var_dynamic_shape_py_init_var_tf(n: sg.i32):
    return while_creates_var_dynamic_shape_py_init_var(n)
# cases: while_creates_var_dynamic_shape_py_init_var_tf n=1 | n=2
# run-error: while_creates_var_dynamic_shape_py_init_var_tf n=0 ~ UnboundLocalError: cannot access local variable 'v'.*ran zero times


@sg.function
def while_creates_nested_var_static_shape_tf(n: sg.i32):
    return while_creates_nested_var_static_shape(n)
# cases: while_creates_nested_var_static_shape_tf n=1 | n=2
# run-error: while_creates_nested_var_static_shape_tf n=0 ~ UnboundLocalError: cannot access local variable 'v'.*ran zero times


@sg.function
def while_creates_nested_var_dynamic_shape_tf(n: sg.i32):
    return while_creates_nested_var_dynamic_shape(n)
# cases: while_creates_nested_var_dynamic_shape_tf n=1 | n=2
# run-error: while_creates_nested_var_dynamic_shape_tf n=0 ~ UnboundLocalError: cannot access local variable 'v'.*ran zero times


@sg.function
def while_creates_nested_var_dynamic_rank_tf(n: sg.i32):
    return while_creates_nested_var_dynamic_rank(n)
# refused: while_creates_nested_var_dynamic_rank_tf .
