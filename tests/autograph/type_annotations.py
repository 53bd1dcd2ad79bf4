"""Ported from TensorFlow's tensorflow/python/autograph/tests/type_annotations_test.py
(Apache License 2.0): a bare annotation statement."""
import stagegraph as sg


def pure_declaration():
    n: int  # noqa: F842
    return 1


@sg.function
def pure_declaration_py():
    return pure_declaration()
