"""Ported from TensorFlow's tensorflow/python/autograph/tests/call_to_named_tuple_test.py
(Apache License 2.0): named tuples made inline, passed in, and subclassed."""
import collections

import stagegraph as sg


def inline_namedtuple(x):
    nt = collections.namedtuple('TestNamedTuple', ('a', 'b'))
    n = nt(a=1, b=x)
    return n


def external_namedtuple(x, nt):
    return nt(a=1, b=x)


class NamedTupleSubclass(collections.namedtuple('TestNamedTuple', ('a',))):

    def foo(self):
        return self.a + 1


def namedtuple_subclass(x):
    nt = NamedTupleSubclass(x)
    return nt.foo()


TestNamedTuple = collections.namedtuple('TestNamedTuple', ('a', 'b'))


@sg.function
def inline_namedtuple_py():
    return tuple(inline_namedtuple(1))


@sg.function
def inline_namedtuple_tf(x: sg.i32):
    return tuple(inline_namedtuple(x))
# cases: inline_namedtuple_tf x=1


@sg.function
def external_namedtuple_py():
    return tuple(external_namedtuple(1, TestNamedTuple))


@sg.function
def external_namedtuple_tf(x: sg.i32):
    return tuple(external_namedtuple(x, TestNamedTuple))
# cases: external_namedtuple_tf x=1


@sg.function
def namedtuple_subclass_py():
    return namedtuple_subclass(1)


@sg.function
def namedtuple_subclass_tf(x: sg.i32):
    return namedtuple_subclass(x)
# cases: namedtuple_subclass_tf x=1


# AutoGraph's tests return the named tuple itself; an entry that does so gets one
# output per field, named by the field (SPEC §2).
@sg.function
def inline_namedtuple_fields_py():
    return inline_namedtuple(1)


@sg.function
def inline_namedtuple_fields_tf(x: sg.i32):
    return inline_namedtuple(x)
# cases: inline_namedtuple_fields_tf x=1 | x=-3


@sg.function
def external_namedtuple_fields_tf(x: sg.i32):
    return external_namedtuple(x, TestNamedTuple)
# cases: external_namedtuple_fields_tf x=1
