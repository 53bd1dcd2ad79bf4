"""Ported from TensorFlow's tensorflow/python/autograph/tests/basic_list_test.py
(Apache License 2.0): lists appended to, read, updated and popped in loops.

ag.stack(l, strict=False) -> sg.stack(l); ag.set_element_type has no counterpart (a
list's items carry their types) and is dropped. The original converts every input to
a tensor (all_inputs_tensors): the _tf entries take run-time i32 inputs.
Not ported: simple_fill(0) and nested_fill(0, 3), which AutoGraph expects to raise and
NumPy cannot stack (an empty list) while the graph gives an empty result."""
import stagegraph as sg


def type_not_annotated(n):
    l = []  # noqa: E741
    for i in range(n):
        l.append(i)
    return sg.stack(l)


def element_access():
    l = []  # noqa: E741
    l.append(1)
    l.append(2)
    l.append(3)
    return 2 * l[1]


def element_update():
    l = []  # noqa: E741
    l.append(1)
    l.append(2)
    l.append(3)
    l[1] = 5
    return sg.stack(l)


def simple_fill(n):
    l = []  # noqa: E741
    for i in range(n):
        l.append(i)
    return sg.stack(l)


def nested_fill(m, n):
    mat = []
    for _ in range(m):
        l = []  # noqa: E741
        for j in range(n):
            l.append(j)
        mat.append(sg.stack(l))
    return sg.stack(mat)


def read_write_loop(n):
    l = []  # noqa: E741
    l.append(1)
    l.append(1)
    for i in range(2, n):
        l.append(l[i - 1] + l[i - 2])
        l[i - 2] = -l[i - 2]
    return sg.stack(l)


def simple_empty(n):
    l = []  # noqa: E741
    l.append(1)
    l.append(2)
    l.append(3)
    l.append(4)
    s = 0
    for _ in range(n):
        s += l.pop()
    return sg.stack(l), s


def mutation(t, n):
    for i in range(n):
        t[i] = i
    return t


# test_tensor_mutation (assertConvertedMatchesNative with Python inputs)
@sg.function
def mutation_py():
    return tuple(mutation([0] * 10, 10))


@sg.function
def element_access_py():
    return element_access()


@sg.function
def element_update_py():
    return element_update()


# AutoGraph: "cannot stack a list without knowing its element type". Over a Python
# range the list is a Python list of ints, which stacks as NumPy does.
@sg.function
def type_not_annotated_py():
    return type_not_annotated(3)


@sg.function
def simple_fill_tf(n: sg.i32):
    return simple_fill(n)
# cases: simple_fill_tf n=5


# The outer list's items are the inner lists stacked, whose length n is known only at
# run time (not a dim of an input): the list's items get a dim of its own, 0 in the
# empty list, taken from the first item appended.
@sg.function
def nested_fill_tf(m: sg.i32, n: sg.i32):
    return nested_fill(m, n)
# cases: nested_fill_tf m=5 n=3 | m=1 n=4 | m=3 n=1


@sg.function
def nested_fill_py():
    return nested_fill(5, 3)


@sg.function
def read_write_loop_tf(n: sg.i32):
    return read_write_loop(n)
# cases: read_write_loop_tf n=4


@sg.function
def simple_empty_py():
    return simple_empty(0) + simple_empty(2)


# l.pop() in a staged loop: the body is staged once, so a pop of a list made before
# the loop would run once at compile time, for every n; it is refused instead (a list
# made before a staged loop may be appended to, or have its items assigned, there).
@sg.function
def simple_empty_tf(n: sg.i32):
    return simple_empty(n)
# refused: simple_empty_tf pop\(\).*staged once
