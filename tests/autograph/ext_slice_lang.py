"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/ext_slice_test.py (Apache License 2.0):
the functions that need `lambda`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
"""
import stagegraph as sg


def slice_of_application(n, x):
    return n(x)[:, None] - n(x)[None, :]


@sg.function
def slice_of_application_tf(x: sg.f32[3, 3]):
    return slice_of_application(lambda x: x, x)
# cases: slice_of_application_tf x=[[1,0,0],[0,1,0],[0,0,1]]
