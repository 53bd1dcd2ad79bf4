"""Ported from TensorFlow's tensorflow/python/autograph/tests/call_to_print_function_test.py
(Apache License 2.0): print and tf.print (-> print) of static and staged values.

The functions return nothing; each entry returns its input so that the run is
compared. np.array([1, 2, 3]) is a static tensor in _py entries and an input in _tf."""
import stagegraph as sg


def lone_print(x):
    print(x)


def print_multiple_values(x):
    print("x is", x)


def multiple_prints(x, y):
    print("x is", x)
    print("y is", y)


def print_with_nontf_values(x):
    print("x is", x, {"foo": "bar"})


def print_in_cond(x):
    if x == 0:
        print(x)


def tf_print(x):
    print(x)


@sg.function
def lone_print_py():
    lone_print(1)
    lone_print(sg.arange(1, 4))
    return 0


@sg.function
def lone_print_tf(x: sg.i64[3]):
    lone_print(x)
    return x
# cases: lone_print_tf x=[1,2,3]


@sg.function
def print_multiple_values_py():
    print_multiple_values(1)
    print_multiple_values(sg.arange(1, 4))
    return 0


@sg.function
def print_multiple_values_tf(x: sg.i64[3]):
    print_multiple_values(x)
    return x
# cases: print_multiple_values_tf x=[1,2,3]


@sg.function
def multiple_prints_py():
    multiple_prints(1, 2)
    multiple_prints(sg.arange(1, 4), 4)
    return 0


@sg.function
def multiple_prints_tf(x: sg.i64[3], y: sg.i64):
    multiple_prints(x, y)
    return x, y
# cases: multiple_prints_tf x=[1,2,3] y=4


@sg.function
def print_with_nontf_values_py():
    print_with_nontf_values(1)
    print_with_nontf_values(sg.arange(1, 4))
    return 0


@sg.function
def print_with_nontf_values_tf(x: sg.i64[3]):
    print_with_nontf_values(x)
    return x
# cases: print_with_nontf_values_tf x=[1,2,3]


@sg.function
def print_in_cond_py():
    print_in_cond(0)
    print_in_cond(1)
    return 0


@sg.function
def print_in_cond_tf(x: sg.i32):
    print_in_cond(x)
    return x
# cases: print_in_cond_tf x=0 | x=1


@sg.function
def tf_print_py():
    tf_print(0)
    return 0
