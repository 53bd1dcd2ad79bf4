"""Ported from TensorFlow's tensorflow/python/autograph/tests/call_to_tf_api_test.py
(Apache License 2.0): a call to the op library (tf.constant -> sg.full)."""
import stagegraph as sg


def core_tf_call(x):
    return x * sg.full((), 2, dtype=sg.i32)


@sg.function
def core_tf_call_py():
    return core_tf_call(1)


@sg.function
def core_tf_call_tf(x: sg.i32):
    return core_tf_call(x)
# cases: core_tf_call_tf x=1
