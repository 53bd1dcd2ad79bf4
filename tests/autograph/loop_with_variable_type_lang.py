"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/loop_with_variable_type_test.py (Apache License 2.0):
the functions that need `collections.namedtuple`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
See loop_with_variable_type.py for the translations.
"""
import collections

import stagegraph as sg


def _const(values):
    # tf.constant of a list of ints: an i32 tensor.
    return sg.astype(sg.stack(values), sg.i32) if not isinstance(values[0], list) else \
        sg.astype(sg.stack([sg.stack(row) for row in values]), sg.i32)


def for_with_nested_variable_shape_inside_if(n):
    Test = collections.namedtuple("Test", ["var"])
    t = Test(var=_const([0]))
    v = _const([0, 0])
    if n > 1:
        v = sg.relax(v, "D", 0)
        for i in range(n):
            v = sg.concatenate((v, [i]), 0)
            t = Test(var=t.var + 1)
            i += 1
    else:
        v = _const([1, 2, 3])
        t = Test(var=_const([3]))
    return v


@sg.function
def for_with_nested_variable_shape_inside_if_py():
    return (for_with_nested_variable_shape_inside_if(0), for_with_nested_variable_shape_inside_if(1),
            for_with_nested_variable_shape_inside_if(2))


@sg.function
def for_with_nested_variable_shape_inside_if_tf(n: sg.i32):
    return for_with_nested_variable_shape_inside_if(n)
# cases: for_with_nested_variable_shape_inside_if_tf n=0 | n=1 | n=2
