"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/loop_basic_test.py (Apache License 2.0):
while/else and for/else, refused by AutoGraph (NotImplementedError) and by SPEC §4
(each a located error), apart because a refused construct fails its whole module.
"""
import stagegraph as sg


def while_else(x, y):
    s = 0
    while x > 0:
        x -= 1
        if x > y:
            break
        s += x
    else:
        s = -100
    return s


def for_else(l1, l2):
    s = 0
    for c in l1:
        if c in l2:
            break
        s = s * 10 + c
    else:
        s = -1000
    return s


# test_for_else, test_while_else: AutoGraph raises NotImplementedError; so does SPEC §4.
@sg.function
def for_else_py():
    return for_else([1, 2], [])
# error: for_else_py else


@sg.function
def for_else_tf(l1: sg.i32["A"], l2: sg.i32["B"]):
    return for_else(l1, l2)
# error: for_else_tf else


@sg.function
def while_else_py():
    return while_else(2, 0)
# error: while_else_py else


@sg.function
def while_else_tf(x: sg.i32, y: sg.i32):
    return while_else(x, y)
# error: while_else_tf else
