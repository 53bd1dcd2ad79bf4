"""Ported from TensorFlow's tensorflow/python/autograph/tests/call_to_builtin_function_test.py
(Apache License 2.0): calls to builtins, aliased and returned as values.

Lists given by the original ([1, 2], [1, 2, 3], []) become tensors of that static
shape in the _tf entries, as tf.constant gives. A list result is returned as a tuple
(an entry returns tensors, tuples or dicts)."""
import stagegraph as sg


def dict_call(x):
    return dict(foo=x)


def dict_call_aliased(x):
    def fake_dict(x):
        return x

    dict = fake_dict  # noqa: A001
    return dict(x)


def dict_call_dynamic(x):
    def gen_dict():
        return dict

    d = gen_dict()
    return d(foo=x)


def len_call(x):
    return len(x)


def nested_call(x):
    return list(range(len(x)))


def len_call_aliased(x):
    def fake_len(x):
        return x

    len = fake_len  # noqa: A001
    return len(x)


def len_call_dynamic(x):
    def gen_len():
        return len

    l = gen_len()  # noqa: E741
    return l(x)


@sg.function
def dict_call_py():
    return dict_call(1)


@sg.function
def dict_call_tf(x: sg.i32):
    return dict_call(x)
# cases: dict_call_tf x=1


@sg.function
def len_call_py():
    return len_call([1, 2])


@sg.function
def len_call_tf(x: sg.i32[2]):
    return len_call(x)
# cases: len_call_tf x=[1,2]


@sg.function
def dict_call_aliased_py():
    return dict_call_aliased(1)


@sg.function
def dict_call_aliased_tf(x: sg.i32):
    return dict_call_aliased(x)
# cases: dict_call_aliased_tf x=1


@sg.function
def len_call_aliased_py():
    return tuple(len_call_aliased([1, 2]))


@sg.function
def len_call_aliased_tf(x: sg.i32[2]):
    return len_call_aliased(x)
# cases: len_call_aliased_tf x=[1,2]


@sg.function
def dict_call_dynamic_py():
    return dict_call_dynamic(1)


@sg.function
def dict_call_dynamic_tf(x: sg.i32):
    return dict_call_dynamic(x)
# cases: dict_call_dynamic_tf x=1


@sg.function
def len_call_dynamic_py():
    return len_call_dynamic([1, 2])


@sg.function
def len_call_dynamic_tf(x: sg.i32[2]):
    return len_call_dynamic(x)
# cases: len_call_dynamic_tf x=[1,2]


@sg.function
def nested_call_py():
    return (len(nested_call([])),) + tuple(nested_call([1, 2, 3]))


@sg.function
def nested_call_tf(x: sg.i32[3], e: sg.i32[0]):
    return (len(nested_call(e)),) + tuple(nested_call(x))
# cases: nested_call_tf x=[1,2,3] e=[]
