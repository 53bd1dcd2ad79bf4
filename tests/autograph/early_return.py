"""Ported from TensorFlow's tensorflow/python/autograph/tests/early_return_test.py
(Apache License 2.0): several returns, some in conditionals, loops, try and finally.

tf.print -> print; tf.constant(1) -> sg.full((), 1, dtype=sg.i32); tf.stack ->
sg.stack; tf.reduce_sum -> sg.sum (cast back to i32, as reduce_sum keeps int32).
`with tf.name_scope('')` has no counterpart and no effect on control flow: its body
is kept, one level less indented. _py entries take Python inputs, _tf run-time ones."""
import stagegraph as sg


def return_with_default(x):
    if x > 0:
        print('x', x)
        return x
    return x * x


def return_dependent_on_local(c):
    t = sg.full((), 1, dtype=sg.i32)
    if c:
        return t
    t = sg.stack([t, t])
    return sg.astype(sg.sum(t), sg.i32)


def return_possibly_undefined(x):
    if x > 0:
        if x < 5:
            return x
    else:
        return x * x * x


def nested_ifs(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x


def possible_return_before_loop(c1, c2, n):
    if c1:
        if c2:
            return 1
    for _ in range(n):
        pass
    return 2


def nested_ifs_and_context_managers(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x


def unreachable_return(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x
    return x * x * x * x


def return_with_default_in_contexmanager(x):
    if x > 0:
        return 1
    return 0


@sg.function
def return_with_default_py():
    return return_with_default(0), return_with_default(1)


@sg.function
def return_with_default_tf(x: sg.i32):
    return return_with_default(x)
# cases: return_with_default_tf x=0 | x=1


@sg.function
def return_dependent_on_local_py():
    return return_dependent_on_local(1), return_dependent_on_local(0)


@sg.function
def return_dependent_on_local_tf(c: sg.bool):
    return return_dependent_on_local(c)
# cases: return_dependent_on_local_tf c=True | c=False


@sg.function
def return_possibly_undefined_py():
    return return_possibly_undefined(0), return_possibly_undefined(3), return_possibly_undefined(5) is None


# AutoGraph: "else branch must also have a return". Here too: a staged path reaches
# the end of the function without a return.
@sg.function
def return_possibly_undefined_tf(x: sg.i32):
    return return_possibly_undefined(x)
# error: return_possibly_undefined_tf without a return


@sg.function
def nested_ifs_py():
    return nested_ifs(-1), nested_ifs(3), nested_ifs(6)


@sg.function
def nested_ifs_tf(x: sg.i32):
    return nested_ifs(x)
# cases: nested_ifs_tf x=-1 | x=3 | x=6


@sg.function
def possible_return_before_loop_py():
    r = ()
    for c1 in (True, False):
        for c2 in (True, False):
            for n in (0, 1, 2):
                r = r + (possible_return_before_loop(c1, c2, n),)
    return r


@sg.function
def possible_return_before_loop_tf(c1: sg.bool, c2: sg.bool, n: sg.i32):
    return possible_return_before_loop(c1, c2, n)
# cases: possible_return_before_loop_tf c1=True c2=True n=0 | c1=True c2=False n=2 | c1=False c2=True n=1 | c1=False c2=False n=0


@sg.function
def nested_ifs_and_context_managers_py():
    return nested_ifs_and_context_managers(0), nested_ifs_and_context_managers(3), nested_ifs_and_context_managers(5)


@sg.function
def nested_ifs_and_context_managers_tf(x: sg.i32):
    return nested_ifs_and_context_managers(x)
# cases: nested_ifs_and_context_managers_tf x=0 | x=3 | x=5


@sg.function
def unreachable_return_py():
    return unreachable_return(0), unreachable_return(3), unreachable_return(5)


@sg.function
def unreachable_return_tf(x: sg.i32):
    return unreachable_return(x)
# cases: unreachable_return_tf x=0 | x=3 | x=5


@sg.function
def return_with_default_in_contexmanager_py():
    return return_with_default_in_contexmanager(0), return_with_default_in_contexmanager(1)


@sg.function
def return_with_default_in_contexmanager_tf(x: sg.i32):
    return return_with_default_in_contexmanager(x)
# cases: return_with_default_in_contexmanager_tf x=0 | x=1


