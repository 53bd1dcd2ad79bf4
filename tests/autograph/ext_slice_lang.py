"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/ext_slice_test.py (Apache License 2.0):
the functions that need `lambda`, apart so that the rest of that file's
entries compile today (the compiler refuses a module with a construct it does not take).
"""
import stagegraph as sg


def slice_of_application(n, x):
    return n(x)[:, None] - n(x)[None, :]


@sg.function
def slice_of_application_tf(x: sg.f32[3, 3]):
    return slice_of_application(lambda x: x, x)
# cases: slice_of_application_tf x=[[1,0,0],[0,1,0],[0,0,1]]
