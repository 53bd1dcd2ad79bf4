"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/loop_scoping_test.py (Apache License 2.0):
the functions that need `lambda`, apart so that the rest of that file's
entries compile today (the compiler refuses a module with a construct it does not take).
"""
import stagegraph as sg


def for_with_lambda_iter_local_var(l):  # noqa: E741
    fns = []
    results = []
    for i in l:
        fns.append(lambda i=i: i + i)
    for f in fns:
        results.append(f())
    return results


@sg.function
def for_with_lambda_iter_local_var_py():
    return tuple(for_with_lambda_iter_local_var([1])) + tuple(for_with_lambda_iter_local_var([1, 2]))
