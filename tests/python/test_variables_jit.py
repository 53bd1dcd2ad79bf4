"""session.variables, save/load (SPEC §12) and sg.jit (SPEC §14)."""
import threading

import numpy as np
import pytest

import stagegraph as sg
from conftest import compile_text

STATE = """
import stagegraph as sg

acc = sg.variables(count=0, total=sg.zeros((2,)))

@sg.function
def add(x: sg.f32[2]):
    assert sg.all(x < 100.0), "x out of range"
    acc.total = acc.total + x
    acc.count += 1
    return acc.total

@sg.function
def peek(scale: sg.f32):
    return acc.total * scale
"""


def test_variables_save_and_load(tmp_path):
    p = compile_text(STATE)
    assert sorted(v.name for v in p.variables) == ["count", "total"]
    s = p.session()
    np.testing.assert_array_equal(s.variables["total"], [0, 0])
    s.add(np.array([1, 2], np.float32))
    # A run reads the values its start saw (SPEC §12): the first run's assignment.
    np.testing.assert_array_equal(s.add(np.array([1, 2], np.float32)), [1, 2])
    with pytest.raises(sg.RunError):
        s.add(np.array([1, 200], np.float32))  # a failed run changes nothing
    v = s.variables
    assert int(v["count"]) == 2
    np.testing.assert_array_equal(v["total"], [2, 4])
    # Another entry of the same Session sees them.
    np.testing.assert_array_equal(s.peek(np.float32(10)), [20, 40])
    path = tmp_path / "state.safetensors"
    s.save_variables(str(path))
    fresh = p.session()
    np.testing.assert_array_equal(fresh.variables["total"], [0, 0])  # each Session its own
    fresh.load_variables(str(path))
    np.testing.assert_array_equal(fresh.peek(1.0), [2, 4])
    np.testing.assert_array_equal(fresh.add(np.array([1, 1], np.float32)), [2, 4])
    np.testing.assert_array_equal(fresh.variables["total"], [3, 5])
    np.testing.assert_array_equal(s.variables["total"], [2, 4])  # untouched by the other Session
    with pytest.raises(FileNotFoundError):
        fresh.load_variables(str(tmp_path / "missing.safetensors"))


LOOP_STATE = """
import stagegraph as sg

acc = sg.variables(count=0, total=sg.zeros((2,)))

@sg.function
def add_all(xs: sg.f32["S", 2]):
    total, count = acc.total, acc.count
    for i in range(xs.shape[0]):
        total = total + xs[i]
        count += 1
        acc.total = total  # assigned in the staged loop: the last iteration's value is stored
        acc.count = count
        assert sg.all(total < 100.0), "total out of range"
    return acc.count  # a read sees the value at the start of the run
"""


def test_variables_assigned_in_a_staged_loop_commit_when_the_run_succeeds():
    s = compile_text(LOOP_STATE).session()
    assert int(s.add_all(np.ones((3, 2), np.float32))) == 0
    np.testing.assert_array_equal(s.variables["total"], [3, 3])
    # The assert fails in the second iteration, after two of its assignments: the
    # run changes nothing.
    with pytest.raises(sg.RunError, match="total out of range"):
        s.add_all(np.array([[1, 1], [200, 1], [1, 1]], np.float32))
    assert int(s.variables["count"]) == 3
    np.testing.assert_array_equal(s.variables["total"], [3, 3])
    assert int(s.add_all(np.ones((2, 2), np.float32))) == 3
    assert int(s.variables["count"]) == 5
    np.testing.assert_array_equal(s.variables["total"], [5, 5])


JIT_SOURCE = """
import stagegraph as sg

@sg.function
def mlp(x: sg.f32["N", 4], w: sg.f32[4, 3], b: sg.f32[3]):
    return sg.softmax(sg.relu(x @ w + b))
"""


def test_jit_compiles_once_per_signature(tmp_program):
    import importlib.util
    path = tmp_program(JIT_SOURCE, name="jit_model.py")
    spec = importlib.util.spec_from_file_location("jit_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fast = sg.jit(mod.mlp)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    for n in (2, 2, 5):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_allclose(fast(x, w, b), np.asarray(mod.mlp(x, w, b)), rtol=1e-5, atol=1e-6)
    assert fast.compiles == 2  # [2, 4] and [5, 4]
    fast(x, w, b)
    assert fast.compiles == 2
    results = []
    threads = [threading.Thread(target=lambda: results.append(fast(x, w, b))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and fast.compiles == 2
    for r in results:
        np.testing.assert_array_equal(r, results[0])
