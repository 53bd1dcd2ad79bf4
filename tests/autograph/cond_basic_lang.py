"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/cond_basic_test.py (Apache License 2.0):
the functions that need `del`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
See cond_basic.py."""
import stagegraph as sg


def if_destroys_var(c):
    i = 1
    if c:
        del i
    return i


def if_else_destroys_var(c):
    i = 1
    if c:
        del i
    else:
        del i
    return i


def else_destroys_var(c):
    i = 2
    if c:
        pass
    else:
        del i
    return i


@sg.function
def if_destroys_var_py():
    return if_destroys_var(False)


@sg.function
def else_destroys_var_py():
    return else_destroys_var(True)


@sg.function
def if_else_destroys_var_py():
    return if_else_destroys_var(1)
# error: if_else_destroys_var_py 'i'


@sg.function
def if_else_destroys_var_tf(c: sg.bool):
    return if_else_destroys_var(c)
# error: if_else_destroys_var_tf 'i'
