"""session.run: inputs in place, outputs without a copy, errors, the GIL, cancel,
one thread per Session (SPEC §14)."""
import array
import threading
import time

import numpy as np
import pytest

import stagegraph as sg
from conftest import compile_text

PROGRAM = """
import stagegraph as sg

@sg.function
def ident(x: sg.f32["N"]):
    return x

@sg.function
def affine(x: sg.f32["N", 3], w: sg.f32[3, 2], b: sg.f32[2]):
    return x @ w + b

@sg.function
def stats(x: sg.f32["N"], k: sg.i64, on: sg.bool):
    return {"total": sg.sum(x) * sg.astype(k, sg.f32), "flag": sg.logical_not(on)}

@sg.function
def checked(x: sg.f32["N"], n: sg.i64):
    assert n >= 0, "n must not be negative"
    return x * 2.0

@sg.function
def spin(n: sg.i64, x: sg.f32[4]):
    i = sg.zeros((), dtype=sg.i64)
    while i < n:
        x = x * 0.5 + 1.0
        i = i + 1
    return x

@sg.function
def say(x: sg.f32[2]):
    print("x is", x)
    return x
"""


@pytest.fixture(scope="module")
def program():
    return compile_text(PROGRAM)


def test_single_output_array_and_dict_of_outputs(program):
    s = program.session()
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    w = np.ones((3, 2), np.float32)
    b = np.array([0.5, -1], np.float32)
    out = s.run("affine", x, w, b)
    np.testing.assert_array_equal(out, x @ w + b)
    np.testing.assert_array_equal(s.affine(x=x, w=w, b=b), out)
    np.testing.assert_array_equal(s.affine(x, b=b, w=w), out)
    d = s.stats(np.array([1, 2, 3], np.float32), 2, True)
    assert set(d) == {"total", "flag"}
    assert d["total"].shape == () and d["total"] == 12.0 and d["flag"] == np.False_


def test_a_session_outlives_its_program():
    """The Program's bytes stay alive while a Session of it does: a Session made from a
    temporary Program reads its constants after the Program is gone."""
    import gc
    s = compile_text(PROGRAM).session()
    gc.collect()
    junk = [b"\xff" * n for n in range(64, 1 << 16, 64)]  # reuses the freed memory
    x = np.ones(4, np.float32)
    np.testing.assert_array_equal(s.spin(np.int64(3), x), np.full(4, 1.875, np.float32))
    del junk


def test_input_mismatches_are_value_errors_naming_the_input(program):
    s = program.session()
    x = np.ones((2, 3), np.float32)
    w = np.ones((3, 2), np.float32)
    b = np.ones(2, np.float32)
    with pytest.raises(ValueError, match="input 'w'.*float64"):
        s.affine(x, w.astype(np.float64), b)
    with pytest.raises(ValueError, match="'w'"):
        s.affine(x, np.ones((4, 2), np.float32), b)
    with pytest.raises(ValueError, match="'b'"):
        s.affine(x, w, np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="'x'.*C-contiguous"):
        s.affine(np.ones((3, 2), np.float32).T, w, b)
    with pytest.raises(ValueError, match="unknown input 'q'"):
        s.affine(x, w, b, q=x)
    with pytest.raises(TypeError, match="missing input 'b'"):
        s.affine(x, w)
    with pytest.raises(TypeError, match="'x'.*twice"):
        s.affine(x, w, b, x=x)
    with pytest.raises(ValueError, match="'k'"):
        s.stats(np.ones(2, np.float32), 1.5, True)
    with pytest.raises(ValueError, match="'x'.*str"):
        s.stats("abc", 1, True)
    with pytest.raises(ValueError, match="no entry 'nope'"):
        s.run("nope")
    with pytest.raises(AttributeError, match="nope"):
        s.nope
    # The Session stays usable after each refusal.
    np.testing.assert_array_equal(s.affine(x, w, b), x @ w + b)


def test_inputs_are_bound_in_place(program):
    s = program.session()
    x = np.arange(5, dtype=np.float32)
    y = s.ident(x)
    # The entry returns its input: the runtime's result is the caller's own memory,
    # so the input was not copied on the way in.
    assert s._output_view_address("ident", 0) == x.ctypes.data
    np.testing.assert_array_equal(y, x)


def test_outputs_own_the_runtimes_buffer_without_a_copy(program):
    s = program.session()
    x = np.ones((2, 3), np.float32)
    w = np.ones((3, 2), np.float32)
    b = np.zeros(2, np.float32)
    copies = s._tensor_copies("affine")
    y = s.affine(x, w, b)
    # The array's data is the result's own buffer, which Session::output handed
    # over as it is: neither the runtime nor the binding copied it.
    assert y.ctypes.data == s._output_address("affine", 0) == s._output_view_address("affine", 0)
    assert s._tensor_copies("affine") == copies
    assert not y.flags.owndata and y.base is not None
    before = y.copy()
    y2 = s.affine(x, w, b + 1)  # the next run may not write into y: y still holds its buffer
    np.testing.assert_array_equal(y, before)
    assert y2.ctypes.data != y.ctypes.data
    del s  # y outlives the Session that made it
    np.testing.assert_array_equal(y, before)


def test_buffer_protocol_and_dlpack_inputs(program):
    s = program.session()
    buf = array.array("f", [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.ident(buf), [1, 2, 3])
    np.testing.assert_array_equal(s.ident(memoryview(buf)), [1, 2, 3])

    class OnlyDLPack:  # what torch / jax / cupy hand over: __dlpack__ and nothing else
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kwargs):
            return self._a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    x = np.arange(4, dtype=np.float32)
    s.ident(OnlyDLPack(x))
    assert s._output_view_address("ident", 0) == x.ctypes.data


def test_run_error_has_file_and_line(program):
    s = program.session()
    with pytest.raises(sg.RunError) as e:
        s.checked(np.ones(2, np.float32), -1)
    err = e.value
    assert err.code == "runtime_error"
    line = PROGRAM.lstrip("\n").splitlines().index("    assert n >= 0, \"n must not be negative\"") + 1
    assert err.file == "<string>" and err.line == line and err.column == 5
    assert "n must not be negative" in err.message
    np.testing.assert_array_equal(s.checked(np.ones(2, np.float32), 1), [2, 2])


def test_print_lines_go_to_sys_stdout(program, capsys):
    program.session().say(np.array([1, 2], np.float32))
    assert "x is" in capsys.readouterr().out


def _spin_seconds(s, n):
    t = time.perf_counter()
    s.spin(n, np.zeros(4, np.float32))
    return time.perf_counter() - t


def _calibrate(s, seconds):
    n = 10000
    while _spin_seconds(s, n) < 0.02:
        n *= 4
    return int(n * seconds / _spin_seconds(s, n)) + 1


def test_gil_is_released_during_a_run(program):
    s = program.session()
    n = _calibrate(s, 0.5)
    done = threading.Event()
    t = threading.Thread(target=lambda: (s.spin(n, np.zeros(4, np.float32)), done.set()))
    count = 0
    t.start()
    time.sleep(0.05)  # the run is under way
    start = time.perf_counter()
    while not done.is_set():
        count += 1  # Python code on this thread while the other one runs the graph
    elapsed = time.perf_counter() - start
    t.join()
    assert elapsed > 0.1, "the run ended too soon to tell"
    # Holding the GIL, the run would let this loop run only at the switch
    # interval's handful of turns; it ran throughout instead.
    assert count > 10000, f"{count} iterations in {elapsed:.3f} s while the graph ran"


def test_two_sessions_run_concurrently(program):
    s1, s2 = program.session(), program.session()
    n = _calibrate(s1, 0.3)
    one = _spin_seconds(s1, n)
    spans = []

    def run(s):
        t0 = time.perf_counter()
        s.spin(n, np.zeros(4, np.float32))
        spans.append((t0, time.perf_counter()))

    ts = [threading.Thread(target=run, args=(s,)) for s in (s1, s2)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    both = time.perf_counter() - t0
    (a0, a1), (b0, b1) = spans
    assert max(a0, b0) < min(a1, b1), "the two runs did not overlap"
    print(f"one run {one:.3f} s, two on two threads {both:.3f} s")


def test_cancel_from_another_thread(program):
    s = program.session()
    timer = threading.Timer(0.2, s.cancel)
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(sg.RunError) as e:
        s.spin(10**12, np.zeros(4, np.float32))  # hours, unless cancelled
    assert e.value.code == "cancelled"
    assert time.perf_counter() - t0 < 5
    np.testing.assert_array_equal(s.spin(1, np.zeros(4, np.float32)), np.ones(4))  # usable again


def test_timeout(program):
    s = program.session(timeout=0.1)
    with pytest.raises(sg.RunError) as e:
        s.spin(10**12, np.zeros(4, np.float32))
    assert e.value.code == "deadline_exceeded" and e.value.line is not None


def test_a_session_used_by_two_threads_at_once_raises(program):
    s = program.session()
    n = _calibrate(s, 0.5)
    t = threading.Thread(target=lambda: s.spin(n, np.zeros(4, np.float32)))
    t.start()
    time.sleep(0.1)
    with pytest.raises(RuntimeError, match="in use by another thread"):
        s.ident(np.ones(1, np.float32))
    t.join()
    np.testing.assert_array_equal(s.ident(np.ones(1, np.float32)), [1])


def test_memory_limit():
    p = compile_text("""
        import stagegraph as sg

        @sg.function
        def big(n: sg.i64):
            return sg.zeros((n, 1024))
    """)
    s = p.session(max_memory=1 << 20)
    assert s.big(10).shape == (10, 1024)
    with pytest.raises(sg.RunError) as e:
        s.big(1 << 20)
    assert e.value.code == "limit_exceeded"
