"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/loop_scoping_test.py (Apache License 2.0):
the functions that need `lambda`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
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
