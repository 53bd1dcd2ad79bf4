"""Ported from TensorFlow's tensorflow/python/autograph/tests/basic_ifexp_test.py
(Apache License 2.0): conditional expressions in staged and static branches.

Entries ending in _py take the original's Python inputs (evaluated at compile time);
entries ending in _tf take them as run-time tensors (tf.constant -> an i32 input)."""
import stagegraph as sg


def consecutive_conds(x):
    if x > 0:
        x = -x if x < 5 else x
    else:
        x = -2 * x if x < 5 else 1
    if x > 0:
        x = -x if x < 5 else x
    else:
        x = (3 * x) if x < 5 else x
    return x


def cond_with_multiple_values(x):
    if x > 0:
        x = -x if x < 5 else x
        y = 2 * x if x < 5 else x
        z = -y if y < 5 else y
    else:
        x = 2 * x if x < 5 else x
        y = -x if x < 5 else x
        z = -y if y < 5 else y
    return x, y, z


def side_effect_only_ifexp_with_imbalanced_structure(x):
    # tf.unstack(x) -> a list of rows; tf.size(x) -> x.size; tf.autograph.trace -> print.
    traced_args = [x[i] for i in range(x.shape[0])] if x.size > 0 else []
    print(traced_args)
    return x * 2 + 1


@sg.function
def consecutive_conds_py():
    return consecutive_conds(-1), consecutive_conds(1), consecutive_conds(5)


@sg.function
def consecutive_conds_tf(x: sg.i32):
    return consecutive_conds(x)
# cases: consecutive_conds_tf x=-1 | x=1 | x=5


@sg.function
def cond_with_multiple_values_py():
    return cond_with_multiple_values(-1) + cond_with_multiple_values(1) + cond_with_multiple_values(5)


@sg.function
def cond_with_multiple_values_tf(x: sg.i32):
    return cond_with_multiple_values(x)
# cases: cond_with_multiple_values_tf x=-1 | x=1 | x=5


# AutoGraph raises "must return the same nested structure in both branches" for
# tf.constant([1.0]). Here a static shape makes x.size a Python int, so the
# conditional is Python's and the program is legal; with a run-time size the two
# arms (a list of one row, an empty list) cannot be joined, which is an error.
@sg.function
def side_effect_only_ifexp_with_imbalanced_structure_tf(x: sg.f32[1]):
    return side_effect_only_ifexp_with_imbalanced_structure(x)
# cases: side_effect_only_ifexp_with_imbalanced_structure_tf x=[1.0]


@sg.function
def side_effect_only_ifexp_with_imbalanced_structure_dyn(x: sg.f32["N"]):
    return side_effect_only_ifexp_with_imbalanced_structure(x)
# error: side_effect_only_ifexp_with_imbalanced_structure_dyn .
