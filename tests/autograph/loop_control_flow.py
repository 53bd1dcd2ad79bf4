"""Ported from TensorFlow's tensorflow/python/autograph/tests/loop_control_flow_test.py
(Apache License 2.0): break, continue and return in single and nested loops.

Not ported: the tf.data variants. _py entries take the original's Python inputs;
_tf entries take the tf.constant inputs at run time (i32; lists as i32 tensors with
a symbolic length, so the loops are staged); _tl entries take a list of tensors."""
import stagegraph as sg


def continue_in_single_for(l):  # noqa: E741
    s = 0
    for c in l:
        if c % 2 > 0:
            continue
        s += c
    return s


def continue_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        if x % 2 > 0:
            continue
        s += x
    return s


def continue_in_inner_for(m):
    s = 0
    for l in m:  # noqa: E741
        for c in l:
            if c % 2 > 0:
                continue
            s += c
    return s


def continue_in_inner_while(x, y):
    s = 0
    while x > 0:
        x -= 1
        while y > 0:
            y -= 1
            if (x + y) % 2 > 0:
                continue
            s += x + y
    return s


def break_in_single_for(l):  # noqa: E741
    s = 0
    for c in l:
        if c % 2 > 0:
            break
        s += c
    return s


def unconditional_return_in_single_for(l):  # noqa: E741
    s = 0
    for c in l:
        s += c
        return s
    return s


def effectively_unconditional_return_in_single_for(l):  # noqa: E741
    s = 0
    for c in l:
        s += c
        if c % 2 > 0:
            return s
        else:
            return -s
    return s


def unconditional_return_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        s += x
        return s
    return s


def effectively_unconditional_return_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        s += x
        if x % 2 > 0:
            return s
        else:
            return -s
    return s


def break_in_single_while(x):
    s = 0
    while x > 0:
        x -= 1
        if x % 2 > 0:
            break
        s += x
    return s


def break_in_inner_for(m):
    s = 0
    for l in m:  # noqa: E741
        for c in l:
            if c % 2 > 0:
                break
            s += c
    return s


def break_in_inner_while(x, y):
    s = 0
    while x > 0:
        x -= 1
        while y > 0:
            y -= 1
            if ((x + y) % 2) == 0:
                break
            s += x + y
    return s


def break_continue_in_inner_for(m):
    s = 0
    for l in m:  # noqa: E741
        for c in l:
            if c % 2 > 0:
                break
            else:
                continue
            s += c
    return s


def break_continue_in_inner_while(x, y):
    s = 0
    while x > 0:
        x -= 1
        while y > 0:
            y -= 1
            if (x + y) % 2 > 0:
                break
            else:
                continue
            s += x + y
    return s


def break_followed_by_cond_in_single_for(x, y):
    for i in range(y):
        if i == 2:
            break
        if x > 0:
            x -= 1
    return x


def break_followed_by_cond_in_single_while(x):
    while x > 0:
        if x == 2:
            break
        if x > 0:
            x -= 1
    return x


def multiple_breaks_in_single_while(n):
    s = 1
    i = 0
    while i < n:
        i += 1
        if i > 10 * n:
            break
        if i == n:
            break
        s = s * 10 + i
    return i, s


LISTS = ([], [1], [1, 2], [1, 2, 3], [1, 2, 3, 4])


# test_single_for: l in LISTS x (list, tensor); the unconditional returns skip [] in
# AutoGraph ("undefined symbols require at least one iteration") and fail there for an
# empty tensor; here a return in a staged loop is a flag, so [] gives Python's 0.
@sg.function
def single_for_py():
    r = ()
    for l in LISTS:  # noqa: E741
        r = r + (continue_in_single_for(l), break_in_single_for(l), unconditional_return_in_single_for(l),
                 effectively_unconditional_return_in_single_for(l))
    return r


@sg.function
def single_for_tf(l: sg.i32["L"]):  # noqa: E741
    return (continue_in_single_for(l), break_in_single_for(l), unconditional_return_in_single_for(l),
            effectively_unconditional_return_in_single_for(l))
# cases: single_for_tf l=[] | l=[1] | l=[1,2] | l=[1,2,3] | l=[1,2,3,4]


# test_single_while: n in 0..4 x (int, tensor)
@sg.function
def single_while_py():
    r = ()
    for n in (0, 1, 2, 3, 4):
        r = r + (continue_in_single_while(n), break_in_single_while(n)) + multiple_breaks_in_single_while(n) \
            + (break_followed_by_cond_in_single_while(n), unconditional_return_in_single_while(n),
               effectively_unconditional_return_in_single_while(n))
    return r


@sg.function
def single_while_tf(n: sg.i32):
    return (continue_in_single_while(n), break_in_single_while(n)) + multiple_breaks_in_single_while(n) \
        + (break_followed_by_cond_in_single_while(n), unconditional_return_in_single_while(n),
           effectively_unconditional_return_in_single_while(n))
# cases: single_while_tf n=0 | n=1 | n=2 | n=3 | n=4


@sg.function
def break_followed_by_cond_in_single_for_py():
    r = ()
    for x in (0, 1, 3):
        for y in (0, 2, 4):
            r = r + (break_followed_by_cond_in_single_for(x, y),)
    return r


@sg.function
def break_followed_by_cond_in_single_for_tf(x: sg.i32, y: sg.i32):
    return break_followed_by_cond_in_single_for(x, y)
# cases: break_followed_by_cond_in_single_for_tf x=0 y=4 | x=1 y=0 | x=3 y=2 | x=3 y=4


MATRICES = ([[], []], [[1], [2]], [[1, 2], [3, 4]], [[1, 2, 3], [4, 5, 6]])


# test_nested_for: a in MATRICES x (list, tensor, list of tensors)
@sg.function
def nested_for_py():
    r = ()
    for m in MATRICES:
        r = r + (continue_in_inner_for(m), break_in_inner_for(m), break_continue_in_inner_for(m))
    return r


@sg.function
def nested_for_tf(m: sg.i32[2, "L"]):
    return continue_in_inner_for(m), break_in_inner_for(m), break_continue_in_inner_for(m)
# cases: nested_for_tf m=[[],[]] | m=[[1],[2]] | m=[[1,2],[3,4]] | m=[[1,2,3],[4,5,6]]


@sg.function
def nested_for_tl(a: sg.i32["L"], b: sg.i32["L"]):
    m = [a, b]
    return continue_in_inner_for(m), break_in_inner_for(m), break_continue_in_inner_for(m)
# cases: nested_for_tl a=[] b=[] | a=[1] b=[2] | a=[1,2] b=[3,4] | a=[1,2,3] b=[4,5,6]


# test_nested_while: m, n in 0..4 x (int, tensor)
@sg.function
def nested_while_py():
    r = ()
    for m in (0, 1, 2, 3, 4):
        for n in (0, 1, 2, 3, 4):
            r = r + (continue_in_inner_while(m, n), break_in_inner_while(m, n), break_continue_in_inner_while(m, n))
    return r


@sg.function
def nested_while_tf(m: sg.i32, n: sg.i32):
    return continue_in_inner_while(m, n), break_in_inner_while(m, n), break_continue_in_inner_while(m, n)
# cases: nested_while_tf m=0 n=0 | m=0 n=3 | m=1 n=1 | m=1 n=4 | m=2 n=2 | m=3 n=1 | m=3 n=4 | m=4 n=0 | m=4 n=3 | m=4 n=4
