"""sg.load, sg.compile, program.entries, CompileError (SPEC §14)."""
import os
import sys
import warnings

import numpy as np
import pytest

import stagegraph as sg
from conftest import ROOT, compile_text

sys.path.insert(0, os.path.join(ROOT, "examples"))

ADD = """
import stagegraph as sg

@sg.function
def add(x: sg.f32["N", 3], y: sg.f32[3]):
    return x + y

@sg.function
def pair(n: sg.i64, flags: sg.bool["N"]):
    return n * 2, sg.logical_not(flags)
"""


def test_entries_give_signatures_with_symbolic_dims():
    p = compile_text(ADD)
    names = [e.name for e in p.entries]
    assert names == ["add", "pair"]
    add = p.entries[0]
    assert [(s.name, s.dtype, s.shape) for s in add.inputs] == [("x", "f32", ("N", 3)), ("y", "f32", (3,))]
    assert [(s.dtype, s.shape) for s in add.outputs] == [("f32", ("N", 3))]
    pair = p.entries[1]
    assert [(s.dtype, s.shape) for s in pair.inputs] == [("i64", ()), ("bool", ("N",))]
    assert "add(x: f32[N, 3], y: f32[3])" in repr(add)


def test_entries_option_selects_entry_points():
    p = compile_text(ADD, entries=["pair"])
    assert [e.name for e in p.entries] == ["pair"]


def test_load_from_path_and_from_bytes(tmp_program, tmp_path):
    src = tmp_program(ADD)
    p = sg.compile(src)
    graph = tmp_path / "add.sgraph"
    # The same bytes graph-compile writes: compile in process, save, load both ways.
    import stagegraph._compiler as c
    r = c.compile_source(str(src), src.read_text(), [], "", 2, False, False)
    assert r.ok
    graph.write_bytes(r.graph)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([1, 2, 3], np.float32)
    for program in (p, sg.load(graph), sg.load(str(graph)), sg.load(r.graph), sg.load(bytearray(r.graph))):
        np.testing.assert_array_equal(program.session().add(x, y), x + y)


def test_load_errors_name_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.sgraph"):
        sg.load(tmp_path / "nope.sgraph")
    with pytest.raises(ValueError) as e:
        sg.load(b"not a graph at all" * 10)
    assert str(e.value)
    import stagegraph._compiler as c
    bad = bytearray(c.compile_source("<s>", ADD, [], "", 2, False, False).graph)
    bad[-100] ^= 0xFF  # a constant byte or padding: the checksum catches it
    with pytest.raises(ValueError):
        sg.load(bytes(bad))
    with pytest.raises(TypeError):
        sg.load(42)


def test_compile_error_carries_text_and_structured_diagnostics(tmp_program):
    src = tmp_program("""
        import stagegraph as sg

        @sg.function
        def f(x: sg.f32[3], w: sg.f32[4, 2]):
            return x @ w
    """, name="bad.py")
    with pytest.raises(sg.CompileError) as e:
        sg.compile(src)
    err = e.value
    assert str(src) + ":5:" in err.text and "error:" in err.text
    assert str(err) == err.text
    assert len(err.diagnostics) == 1
    d = err.diagnostics[0]
    assert (d.file, d.line, d.severity) == (str(src), 5, "error")
    assert d.column > 0 and "matmul" in d.message
    assert d.notes and all(n.file == str(src) and n.line > 0 for n in d.notes)


def test_compile_warnings_and_werror():
    src = """
        import stagegraph as sg

        @sg.function
        def f(a: sg.f32["N"], b: sg.f32["N", 1]):
            return a + b
    """
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        compile_text(src)
    assert any(issubclass(x.category, sg.CompileWarning) and "warning:" in str(x.message) for x in w)
    with pytest.raises(sg.CompileError) as e:
        compile_text(src, werror=True)
    assert e.value.diagnostics[0].severity == "error"


def test_compile_from_module_function_and_weights(tmp_path):
    import mlp as mlp_module
    rng = np.random.default_rng(1)
    p = sg.compile(mlp_module)
    assert [e.name for e in p.entries] == ["mlp"]
    p2 = sg.compile(mlp_module.mlp, opt_level=0)
    x = rng.random((5, 784), dtype=np.float32)
    ws = []
    for n_in, n_out in ((784, 512), (512, 512), (512, 10)):
        ws += [rng.standard_normal((n_in, n_out)).astype(np.float32) / np.float32(np.sqrt(n_in)),
               rng.standard_normal(n_out).astype(np.float32) * np.float32(0.1)]
    eager = np.asarray(mlp_module.mlp(x, *ws))
    for program in (p, p2):
        out = program.session().mlp(x, *ws)
        assert out.shape == (5, 10) and out.dtype == np.float32
        np.testing.assert_allclose(out, eager, rtol=1e-5, atol=1e-6)

    weighted = """
        import stagegraph as sg

        @sg.function
        def f(x: sg.f32[2]):
            return x * sg.weight("scale")
    """
    p = compile_text(weighted, weights={"scale": np.array([2.0, 3.0], np.float32)})
    np.testing.assert_array_equal(p.session().f(np.ones(2, np.float32)), [2.0, 3.0])
    with pytest.raises(sg.CompileError, match="cannot read weights file"):
        compile_text(weighted, weights=tmp_path / "missing.safetensors")


def test_compile_bad_arguments():
    with pytest.raises(ValueError, match="opt_level"):
        compile_text(ADD, opt_level=3)
    with pytest.raises(TypeError):
        sg.compile(3.5)
    with pytest.raises(sg.CompileError, match="cannot read"):
        sg.compile("/nonexistent/model.py")


def test_compile_time_print_goes_to_stdout(capsys):
    compile_text("""
        import stagegraph as sg

        @sg.function
        def f(x: sg.f32[1]):
            print("at compile time", 6 * 7)
            return x
    """)
    assert "at compile time 42" in capsys.readouterr().out


def test_session_options_are_checked():
    p = compile_text(ADD)
    with pytest.raises(ValueError, match="num_threads"):
        p.session(threads=0)
    with pytest.raises(ValueError, match="device"):
        p.session(device="tpu")
    with pytest.raises(ValueError, match="timeout"):
        p.session(timeout=-1)
    with pytest.raises(ValueError, match="max_memory"):
        p.session(max_memory=0)
    x = np.ones((2, 3), np.float32)
    y = np.ones(3, np.float32)
    np.testing.assert_array_equal(p.session(threads=2).add(x, y), x + y)
    np.testing.assert_array_equal(p.session(device="test").add(x, y), x + y)


def test_type_stubs_ship_with_the_package():
    import importlib.resources
    files = importlib.resources.files("stagegraph")
    for name in ("_runtime.pyi", "_compiler.pyi", "py.typed"):
        assert files.joinpath(name).is_file(), name


def test_quantized_dense_dynamic_and_weight_only(tmp_program, tmp_path):
    """int8 dense weights (SPEC §13): by default the activations are quantized per run,
    as eager mode computes them; dynamic_quantization=False multiplies in f32 with the
    dequantized weights."""
    from stagegraph import _quantize
    src = tmp_program("""
        import stagegraph as sg

        @sg.function
        def dense(x: sg.f32["N", 40]):
            return x @ sg.weight("w", quantize="int8")
    """)
    rng = np.random.default_rng(5)
    w = rng.standard_normal((40, 24)).astype(np.float32)
    x = rng.standard_normal((3, 40)).astype(np.float32)
    x[1, 7] = np.nan
    weights = tmp_path / "w.safetensors"
    header = b'{"w":{"dtype":"F32","shape":[40,24],"data_offsets":[0,%d]}}' % w.nbytes
    weights.write_bytes(len(header).to_bytes(8, "little") + header + w.tobytes())
    import stagegraph._compiler as c
    r = c.compile_source(str(src), src.read_text(), [], str(weights), 2, False, False)
    assert r.ok, r.text
    wide, q, scale = _quantize.quantized(w, "int8")
    dynamic = sg.load(r.graph).session().dense(x)
    np.testing.assert_array_equal(dynamic[[0, 2]], _quantize.dynamic_matmul(x, "int8", q, scale, wide)[[0, 2]])
    assert np.all(np.isnan(dynamic[1]))  # a row with NaN is computed in f32: NaN propagates
    weight_only = sg.load(r.graph, dynamic_quantization=False).session().dense(x)
    np.testing.assert_allclose(weight_only[[0, 2]], (x[[0, 2]].astype(np.float64) @ wide), rtol=1e-5, atol=1e-5)
    assert not np.array_equal(weight_only[[0, 2]], dynamic[[0, 2]])
