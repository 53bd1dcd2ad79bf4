"""Part of the port of TensorFlow's tensorflow/python/autograph/tests/early_return_test.py (Apache License 2.0):
the functions that need `try`/`finally` and `raise`, in a file of their own, split off when the
compiler refused a whole module for one such construct (it takes them all now).
See early_return.py."""
import stagegraph as sg


def return_in_try_with_finally(x):
    try:
        if x > 0:
            return 1
        else:
            return 0
    finally:
        x = x + 1


def return_with_default_in_try_with_finally(x):
    try:
        if x > 0:
            return 1
        return 0
    finally:
        x = x + 1


def return_in_finally(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1  # noqa: B012
        else:
            return 0  # noqa: B012


def return_with_default_in_finally(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1  # noqa: B012
        return 0  # noqa: B012


def return_in_finally_default_in_try(x):
    try:
        if x > 0:
            return 0
    finally:
        return 1  # noqa: B012


def _raising_helper():
    raise ValueError()


def raise_during_return_caught():
    try:
        return _raising_helper()
    except ValueError:
        pass
    return 1


def raise_during_return_caught_in_tail_branch(c):
    if c:
        return 2
    try:
        return _raising_helper()
    except ValueError:
        pass
    return 1


@sg.function
def return_in_try_with_finally_py():
    return return_in_try_with_finally(0), return_in_try_with_finally(1)


@sg.function
def return_in_try_with_finally_tf(x: sg.i32):
    return return_in_try_with_finally(x)
# cases: return_in_try_with_finally_tf x=0 | x=1


@sg.function
def return_with_default_in_try_with_finally_py():
    return return_with_default_in_try_with_finally(0), return_with_default_in_try_with_finally(1)


@sg.function
def return_with_default_in_try_with_finally_tf(x: sg.i32):
    return return_with_default_in_try_with_finally(x)
# cases: return_with_default_in_try_with_finally_tf x=0 | x=1


@sg.function
def return_in_finally_py():
    return return_in_finally(0), return_in_finally(1)


@sg.function
def return_in_finally_tf(x: sg.i32):
    return return_in_finally(x)
# cases: return_in_finally_tf x=0 | x=1


@sg.function
def return_with_default_in_finally_py():
    return return_with_default_in_finally(0), return_with_default_in_finally(1)


@sg.function
def return_with_default_in_finally_tf(x: sg.i32):
    return return_with_default_in_finally(x)
# cases: return_with_default_in_finally_tf x=0 | x=1


@sg.function
def return_in_finally_default_in_try_py():
    return return_in_finally_default_in_try(0), return_in_finally_default_in_try(1)


@sg.function
def return_in_finally_default_in_try_tf(x: sg.i32):
    return return_in_finally_default_in_try(x)
# cases: return_in_finally_default_in_try_tf x=0 | x=1


@sg.function
def raise_during_return_caught_py():
    return raise_during_return_caught()


@sg.function
def raise_during_return_caught_in_tail_branch_py():
    return raise_during_return_caught_in_tail_branch(True), raise_during_return_caught_in_tail_branch(False)


@sg.function
def raise_during_return_caught_in_tail_branch_tf(c: sg.bool):
    return raise_during_return_caught_in_tail_branch(c)
# cases: raise_during_return_caught_in_tail_branch_tf c=True | c=False
