"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_with_variable_type_test.py
(Apache License 2.0): loop-carried tensors whose shape grows, declared with shape
invariants.

tf.autograph.experimental.set_loop_options(shape_invariants=[(v, TensorShape([None]))])
-> v = sg.relax(v, "D", 0) before the loop (SPEC §5: a loop-carried dim declared
symbolic); TensorShape(None) relaxes every dim. tf.concat -> sg.concatenate;
tf.pad -> sg.pad; tf.constant([0, 0]) -> an i32 tensor. Not ported: the tf.data
variants and the SparseTensor ones (no sparse tensors). _py entries take Python
inputs; _tf entries a run-time i32 n (tf.range(n) -> sg.arange(n, dtype=sg.i32), a
tensor of run-time length, so the for loop over it is staged)."""

import stagegraph as sg


def _const(values):
    # tf.constant of a list of ints: an i32 tensor.
    return sg.astype(sg.stack(values), sg.i32) if not isinstance(values[0], list) else \
        sg.astype(sg.stack([sg.stack(row) for row in values]), sg.i32)


def while_with_variable_shape_growing_vector(n):
    v = _const([0, 0])
    v = sg.relax(v, "D", 0)
    i = 0
    while i < n:
        v = sg.concatenate((v, [i]), 0)
        i += 1
    return v


def for_with_variable_shape_growing_vector(l):  # noqa: E741
    v = _const([0, 0])
    v = sg.relax(v, "D", 0)
    for i in l:
        v = sg.concatenate((v, [i]), 0)
    return v


def while_with_variable_shape_growing_matrix_rows(n):
    m = _const([[0]])
    m = sg.relax(m, "R", 0)
    i = 0
    while i < n:
        m = sg.concatenate((m, [[i]]), 0)
        i += 1
    return m


def for_with_variable_shape_growing_matrix_rows(l):  # noqa: E741
    m = _const([[0]])
    m = sg.relax(m, "R", 0)
    for i in l:
        m = sg.concatenate((m, [[i]]), 0)
    return m


def while_with_variable_shape_growing_matrix_cols(n):
    m = _const([[0, 0]])
    m = sg.relax(m, "C", 1)
    i = 0
    while i < n:
        m = sg.concatenate((m, [[i]]), 1)
        i += 1
    return m


def for_with_variable_shape_growing_matrix_cols(l):  # noqa: E741
    m = _const([[0, 0]])
    m = sg.relax(m, "C", 1)
    for i in l:
        m = sg.concatenate((m, [[i]]), 1)
    return m


def while_with_variable_shape_growing_matrix(n):
    m = _const([[0, 0], [0, 0]])
    m = sg.relax(sg.relax(m, "R", 0), "C", 1)
    i = 0
    while i < n:
        m = sg.pad(m, [[1, 1], [1, 1]], constant_values=i)
        i += 1
    return m


def for_with_variable_shape_growing_matrix(l):  # noqa: E741
    m = _const([[0, 0], [0, 0]])
    m = sg.relax(sg.relax(m, "R", 0), "C", 1)
    for i in l:
        m = sg.pad(m, [[1, 1], [1, 1]], constant_values=i)
    return m


def while_with_variable_shape_inside_if(n):
    v = _const([0, 0])
    i = 0
    if n > 1:
        v = sg.relax(v, "D", 0)
        while i < n:
            v = sg.concatenate((v, [i]), 0)
            i += 1
    else:
        v = _const([1, 2, 3])
    return v


def for_with_variable_shape_inside_if(n):
    v = _const([0, 0])
    if n > 1:
        v = sg.relax(v, "D", 0)
        for i in range(n):
            v = sg.concatenate((v, [i]), 0)
            i += 1
    else:
        v = _const([1, 2, 3])
    return v


def while_with_variable_shape_and_break(n):
    v = _const([0, 0])
    i = 0
    if n > 1:
        v = sg.relax(v, "D", 0)
        while i < n:
            v = sg.concatenate((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = _const([1, 2, 3])
    return v


def for_with_variable_shape_and_break(n):
    v = _const([0, 0])
    if n > 1:
        v = sg.relax(v, "D", 0)
        for i in range(n):
            v = sg.concatenate((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = _const([1, 2, 3])
    return v


@sg.function
def growing_vector_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_variable_shape_growing_vector(n), for_with_variable_shape_growing_vector(range(n)))
    return r


@sg.function
def growing_vector_tf(n: sg.i32):
    return while_with_variable_shape_growing_vector(n), for_with_variable_shape_growing_vector(sg.arange(n, dtype=sg.i32))
# cases: growing_vector_tf n=0 | n=1 | n=2


@sg.function
def growing_matrix_rows_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_variable_shape_growing_matrix_rows(n),
                 for_with_variable_shape_growing_matrix_rows(range(n)))
    return r


@sg.function
def growing_matrix_rows_tf(n: sg.i32):
    return (while_with_variable_shape_growing_matrix_rows(n),
            for_with_variable_shape_growing_matrix_rows(sg.arange(n, dtype=sg.i32)))
# cases: growing_matrix_rows_tf n=0 | n=1 | n=2


@sg.function
def growing_matrix_cols_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_variable_shape_growing_matrix_cols(n),
                 for_with_variable_shape_growing_matrix_cols(range(n)))
    return r


@sg.function
def growing_matrix_cols_tf(n: sg.i32):
    return (while_with_variable_shape_growing_matrix_cols(n),
            for_with_variable_shape_growing_matrix_cols(sg.arange(n, dtype=sg.i32)))
# cases: growing_matrix_cols_tf n=0 | n=1 | n=2


@sg.function
def growing_matrix_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_variable_shape_growing_matrix(n), for_with_variable_shape_growing_matrix(range(n)))
    return r


@sg.function
def growing_matrix_tf(n: sg.i32):
    return while_with_variable_shape_growing_matrix(n), for_with_variable_shape_growing_matrix(sg.arange(n, dtype=sg.i32))
# cases: growing_matrix_tf n=0 | n=1 | n=2


@sg.function
def inside_if_py():
    r = ()
    for n in (0, 1, 2):
        r = r + (while_with_variable_shape_inside_if(n), for_with_variable_shape_inside_if(n))
    return r


@sg.function
def inside_if_tf(n: sg.i32):
    return while_with_variable_shape_inside_if(n), for_with_variable_shape_inside_if(n)
# cases: inside_if_tf n=0 | n=1 | n=2


@sg.function
def and_break_py():
    r = ()
    for n in (0, 1, 2, 5):
        r = r + (while_with_variable_shape_and_break(n), for_with_variable_shape_and_break(n))
    return r


@sg.function
def and_break_tf(n: sg.i32):
    return while_with_variable_shape_and_break(n), for_with_variable_shape_and_break(n)
# cases: and_break_tf n=0 | n=1 | n=2 | n=5
