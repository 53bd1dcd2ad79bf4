"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_with_variable_type_illegal_cases_test.py
(Apache License 2.0): loop-carried variables that change type, shape or structure.

In a tf.function, tf.constant(True) is a graph tensor, so `while tf.constant(True)` is
a staged loop; its translation is a run-time bool input `true` (and a tensor l of
run-time length for the for loops). tf.range(tf.random.uniform((), 2, 3)) is a vector
of run-time length: sg.arange(k) of a run-time k. AutoGraph refuses a loop-carried
shape that changes without a shape invariant; Stagegraph gives the changing dim a
fresh symbolic dim (SPEC §5), so the variable-shape and shape-erasure cases run and
match eager mode (`while true` only with true=False: it never ends otherwise). Not
ported: the shape-invariant violations (set_loop_options with a static invariant has
no counterpart) and the tf.data / tf.distribute variants."""
import stagegraph as sg


def while_with_variable_py_type(true):
    n = sg.full((), 0, dtype=sg.i32)
    c = True
    while c:
        c = true
    return n


def while_with_variable_dtype(true):
    n = sg.full((), 0, dtype=sg.i32)
    while true:
        n = sg.full((), 0, dtype=sg.f32)
    return n


def while_with_variable_dtype_and_early_stopping(true):
    n = sg.full((), 0, dtype=sg.i32)
    while true:
        n = sg.full((), 0, dtype=sg.f32)
        break
    return n


def for_with_variable_dtype(l):  # noqa: E741
    n = sg.full((), 0, dtype=sg.i32)
    for _ in l:
        n = sg.full((), 0, dtype=sg.f32)
    return n


def for_with_variable_dtype_and_early_stopping(l):  # noqa: E741
    n = sg.full((), 0, dtype=sg.i32)
    for _ in l:
        n = sg.full((), 0, dtype=sg.f32)
        break
    return n


def while_with_variable_shape(true):
    t = sg.full((1,), 1, dtype=sg.i32)
    while true:
        t = sg.full((2,), 1, dtype=sg.i32)
    return t


def for_with_variable_shape(l):  # noqa: E741
    t = sg.full((1,), 1, dtype=sg.i32)
    for _ in l:
        t = sg.full((2,), 1, dtype=sg.i32)
    return t


def while_with_shape_erasure(true, k):
    t = sg.full((1,), 1, dtype=sg.i32)
    while true:
        t = sg.astype(sg.arange(k), sg.i32)
    return t


def for_with_shape_erasure(l, k):  # noqa: E741
    t = sg.full((1,), 1, dtype=sg.i32)
    for _ in l:
        t = sg.astype(sg.arange(k), sg.i32)
    return t


def while_with_variable_structure(true):
    s = {"a": sg.full((), 0, dtype=sg.i32)}
    while true:
        s = sg.full((), 7.0)
    return s


def for_with_variable_structure(l):  # noqa: E741
    s = [sg.full((), 0, dtype=sg.i32)]
    for _ in l:
        s = s + [sg.full((), 0, dtype=sg.i32)]
    return s


@sg.function
def while_with_variable_py_type_tf(true: sg.bool):
    return while_with_variable_py_type(true)
# error: while_with_variable_py_type_tf (?i)staged


@sg.function
def while_with_variable_dtype_tf(true: sg.bool):
    return while_with_variable_dtype(true)
# error: while_with_variable_dtype_tf 'n'.*(i32|f32)


@sg.function
def while_with_variable_dtype_and_early_stopping_tf(true: sg.bool):
    return while_with_variable_dtype_and_early_stopping(true)
# error: while_with_variable_dtype_and_early_stopping_tf 'n'.*(i32|f32)


@sg.function
def for_with_variable_dtype_tf(l: sg.i32["L"]):  # noqa: E741
    return for_with_variable_dtype(l)
# error: for_with_variable_dtype_tf 'n'.*(i32|f32)


@sg.function
def for_with_variable_dtype_and_early_stopping_tf(l: sg.i32["L"]):  # noqa: E741
    return for_with_variable_dtype_and_early_stopping(l)
# error: for_with_variable_dtype_and_early_stopping_tf 'n'.*(i32|f32)


@sg.function
def while_with_variable_shape_tf(true: sg.bool):
    return while_with_variable_shape(true)
# cases: while_with_variable_shape_tf true=False


@sg.function
def for_with_variable_shape_tf(l: sg.i32["L"]):  # noqa: E741
    return for_with_variable_shape(l)
# cases: for_with_variable_shape_tf l=[] | l=[1,2]


@sg.function
def while_with_shape_erasure_tf(true: sg.bool, k: sg.i32):
    return while_with_shape_erasure(true, k)
# cases: while_with_shape_erasure_tf true=False k=3


@sg.function
def for_with_shape_erasure_tf(l: sg.i32["L"], k: sg.i32):  # noqa: E741
    return for_with_shape_erasure(l, k)
# cases: for_with_shape_erasure_tf l=[] k=3 | l=[1,2] k=3


@sg.function
def while_with_variable_structure_tf(true: sg.bool):
    return while_with_variable_structure(true)
# error: while_with_variable_structure_tf 's'


@sg.function
def for_with_variable_structure_tf(l: sg.i32["L"]):  # noqa: E741
    return tuple(for_with_variable_structure(l))
# error: for_with_variable_structure_tf 's'
