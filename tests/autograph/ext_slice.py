"""Ported from TensorFlow's tensorflow/python/autograph/tests/ext_slice_test.py
(Apache License 2.0): extended slices (tf.newaxis -> None); input tf.eye(3)."""
import stagegraph as sg


def basic_ext_slice(n):
    return n[:, :], n[0, :], n[:, 0]


def basic_expand_dims(n):
    return n[:, None] - n[None, :]


@sg.function
def basic_ext_slice_tf(n: sg.f32[3, 3]):
    return basic_ext_slice(n)
# cases: basic_ext_slice_tf n=[[1,0,0],[0,1,0],[0,0,1]]


@sg.function
def basic_expand_dims_tf(n: sg.f32[3, 3]):
    return basic_expand_dims(n)
# cases: basic_expand_dims_tf n=[[1,0,0],[0,1,0],[0,0,1]]


@sg.function
def basic_ext_slice_static():
    return basic_ext_slice(sg.eye(3))


