"""Ported from TensorFlow's tensorflow/python/autograph/tests/nested_control_flow_test.py
(Apache License 2.0): loops and conditionals nested in each other, with try,
with-blocks and a global.

`with tf.name_scope('')` has no counterpart and no effect on control flow: its body is
kept one level less indented. range -> range; tf.range(n) -> sg.arange(n) of a
run-time n (a tensor of run-time length, iterated by a staged loop). _py entries take
Python inputs, _tf entries run-time i32 ones."""
import stagegraph as sg


def independent_ifs(x, y):
    z = 0
    if x > 0:
        if y > 0:
            z = x + y
    return z


def dependent_inner_if(x):
    y = 0
    if x > 0:
        y = -2 * x
        if y > 0:
            x = -3 * x
    else:
        y = 4 * x
    return x, y


def dependent_imbalanced_inner_if(x):
    y = 0
    if x > 0:
        if x < 3:
            y = -2 * x
            x = -3 * x
    return x, y


def independent_inner_for(a, b):
    p = 0
    for _ in a:
        tmp = b
        for j in tmp:
            p += j
    return p


def independent_inner_while(a, b):
    p = 0
    while a > 0:
        tmp = b
        while tmp > 0:
            p += 1
            tmp -= 1
        a -= 1
    return p


def dependent_inner_for(a, b):
    r = 1
    s = 0
    for _ in a:
        r += s
        tmp = b
        for j in tmp:
            s += j
    return r


def dependent_inner_while(a, b):
    r = 1
    while a > 0:
        r += 1
        tmp = b
        while tmp > 0:
            a -= 1
            tmp -= 1
        a -= 1
    return r


def if_in_for(a):
    k = 0
    for i in a:
        if i % 2 > 0:
            j = i // 2
            k += j
    return k


def while_with_continue_in_context_manager(x):
    z = 0
    while x > 0:
        x = x - 1
        if x < 5:
            continue
        z = z + 1
    return z


def while_break_in_context_manager(x):
    z = 0
    while x > 0:
        x = x - 1
        if x < 5:
            break
        z = z + 1
    return z


def loop_initializing_invariant_variable(n):
    for i in range(n):
        if i == 0:
            a = 1
        else:
            a = 2
    return a


def loop_initializing_variant_variable(n):
    for i in range(n):
        if i == 0:
            a = 1
        else:
            a = a + 1
    return a


@sg.function
def independent_ifs_py():
    return independent_ifs(-1, -1), independent_ifs(-1, 1), independent_ifs(1, -1), independent_ifs(1, 1)


@sg.function
def independent_ifs_tf(x: sg.i32, y: sg.i32):
    return independent_ifs(x, y)
# cases: independent_ifs_tf x=-1 y=-1 | x=-1 y=1 | x=1 y=-1 | x=1 y=1


@sg.function
def dependent_inner_if_py():
    return dependent_inner_if(-1) + dependent_inner_if(1)


@sg.function
def dependent_inner_if_tf(x: sg.i32):
    return dependent_inner_if(x)
# cases: dependent_inner_if_tf x=-1 | x=1


@sg.function
def dependent_imbalanced_inner_if_py():
    return dependent_imbalanced_inner_if(-1) + dependent_imbalanced_inner_if(1)


@sg.function
def dependent_imbalanced_inner_if_tf(x: sg.i32):
    return dependent_imbalanced_inner_if(x)
# cases: dependent_imbalanced_inner_if_tf x=-1 | x=1


@sg.function
def independent_inner_for_py():
    r = ()
    for a in (0, 1, 2):
        for b in (0, 1, 2):
            r = r + (independent_inner_for(range(a), range(b)), dependent_inner_for(range(a), range(b)))
    return r


@sg.function
def inner_for_tf(a: sg.i32, b: sg.i32):
    return independent_inner_for(sg.arange(a), sg.arange(b)), dependent_inner_for(sg.arange(a), sg.arange(b))
# cases: inner_for_tf a=0 b=0 | a=0 b=2 | a=1 b=1 | a=2 b=0 | a=2 b=1 | a=2 b=2


@sg.function
def inner_for_tf_py(a: sg.i32):
    return (independent_inner_for(sg.arange(a), range(2)), dependent_inner_for(sg.arange(a), range(2)),
            independent_inner_for(range(2), sg.arange(a)), dependent_inner_for(range(2), sg.arange(a)))
# cases: inner_for_tf_py a=0 | a=1 | a=2


@sg.function
def inner_while_py():
    r = ()
    for a in (0, 1, 2, 3, 4):
        for b in (0, 1, 2, 3, 4):
            r = r + (independent_inner_while(a, b), dependent_inner_while(a, b))
    return r


@sg.function
def inner_while_tf(a: sg.i32, b: sg.i32):
    return independent_inner_while(a, b), dependent_inner_while(a, b)
# cases: inner_while_tf a=0 b=0 | a=0 b=2 | a=1 b=1 | a=2 b=0 | a=2 b=2 | a=3 b=1 | a=4 b=3 | a=4 b=4


# (a tensor, b int) for dependent_inner_while; (int, tensor) is skipped by the original.
@sg.function
def inner_while_tf_py(a: sg.i32):
    return independent_inner_while(a, 2), dependent_inner_while(a, 2), independent_inner_while(2, a)
# cases: inner_while_tf_py a=0 | a=1 | a=4


@sg.function
def if_in_for_py():
    return if_in_for(range(0)), if_in_for(range(1)), if_in_for(range(2)), if_in_for(range(5))


@sg.function
def if_in_for_tf(a: sg.i32):
    return if_in_for(sg.arange(a))
# cases: if_in_for_tf a=0 | a=1 | a=2 | a=5


@sg.function
def continue_break_py():
    r = ()
    for x in (0, 4, 10):
        r = r + (while_with_continue_in_context_manager(x), while_break_in_context_manager(x))
    return r


@sg.function
def continue_break_tf(x: sg.i32):
    return while_with_continue_in_context_manager(x), while_break_in_context_manager(x)
# cases: continue_break_tf x=0 | x=4 | x=10


@sg.function
def loop_initializing_invariant_variable_py():
    return loop_initializing_invariant_variable(1), loop_initializing_invariant_variable(2)


# AutoGraph accepts n = 1, 2 and fails at run time for 0, as Python does.
@sg.function
def loop_initializing_invariant_variable_tf(n: sg.i32):
    return loop_initializing_invariant_variable(n)
# cases: loop_initializing_invariant_variable_tf n=1 | n=2
# run-error: loop_initializing_invariant_variable_tf n=0 ~ (?m)nested_control_flow\.py:118:12: error: assertion failed: UnboundLocalError: cannot access local variable 'a' where it is not associated with a value: the staged for loop at line 113 ran zero times$


@sg.function
def loop_initializing_invariant_variable_py_zero():
    return loop_initializing_invariant_variable(0)
# error: loop_initializing_invariant_variable_py_zero 'a'


@sg.function
def loop_initializing_variant_variable_py():
    return loop_initializing_variant_variable(1), loop_initializing_variant_variable(2)


@sg.function
def loop_initializing_variant_variable_tf(n: sg.i32):
    return loop_initializing_variant_variable(n)
# error: loop_initializing_variant_variable_tf 'a'
