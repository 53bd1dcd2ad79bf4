"""Eager mode on the runtime's kernels (SPEC §1, §14): with the extension installed,
a program compiled at -O0 and the same program run eagerly give the same bits,
output by output; NumPy (STAGEGRAPH_EAGER=numpy) stays the independent reference
of the e2e suites. Programs: the random-number and transcendental programs of
tests/programs, a particle filter and an adaptive RK45 integrator
(tests/python/programs), and a sweep of every elementwise and reduction op."""
import importlib.util
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import stagegraph as sg
from stagegraph import _kernels

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import e2e_lib  # noqa: E402

PROGRAMS = os.path.join(ROOT, "tests", "programs")
OWN_PROGRAMS = os.path.join(ROOT, "tests", "python", "programs")


def same_bits(expected, actual):
    e, a = np.asarray(expected), np.asarray(actual)
    return e.dtype == a.dtype and e.shape == a.shape and e.tobytes() == a.tobytes()


def load_module(path):
    name = "eager_kernels_" + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_o0(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.CompileWarning)
        return sg.compile(path, opt_level=0)


def outputs_of(program, entry, result):
    """The compiled result by output name (a single output comes back bare)."""
    if isinstance(result, dict):
        return result
    (spec,) = next(e for e in program.entries if e.name == entry).outputs
    return {spec.name: result}


def test_eager_runs_on_the_kernels():
    assert _kernels.backend() == "kernels", "the wheel holds stagegraph._runtime: eager mode must use it"
    before = _kernels.cache_size()
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    sg.exp(x), sg.exp(x), sg.exp(x[:3])
    assert _kernels.cache_size() == before + 2  # one Session per signature


@pytest.mark.parametrize("name", ["random_sampling", "elementwise_chains", "everyday_patterns", "mlp",
                                  "loops_newton", "reductions", "compare_cast", "staged_loops", "linalg_ops"])
def test_programs_bit_identical_at_O0(name):
    path = os.path.join(PROGRAMS, name + ".py")
    module, program = load_module(path), compile_o0(path)
    session = program.session()
    options = e2e_lib.program_options(path)
    checked = 0
    for entry in e2e_lib.entry_names(path):
        fn = getattr(module, entry)
        sig = e2e_lib.signature(fn)
        for binding in e2e_lib.bindings(sig, options):
            inputs = e2e_lib.make_inputs(sig, binding, e2e_lib.seed_for(name, entry, binding), options)
            try:
                eager = e2e_lib.eager_outputs(fn(**{k: v.copy() for k, v in inputs.items()}))
            except Exception:  # inputs the program refuses (its own checks); the e2e suites test those
                continue
            compiled = outputs_of(program, entry, session.run(entry, **inputs))
            assert sorted(eager) == sorted(compiled), entry
            for out, value in eager.items():
                assert same_bits(value, compiled[out]), f"{name}.{entry}.{out} with {binding}"
                checked += 1
    assert checked > 0


def particle_inputs(seed):
    rng = np.random.default_rng(seed)
    return {"ys": (rng.standard_normal(50) * 6).astype(np.float32), "seed": np.int64(seed),
            "q": np.float32(10.0), "r": np.float32(1.0)}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_particle_filter_resamples_the_same_particles(seed):
    path = os.path.join(OWN_PROGRAMS, "particle_filter.py")
    inputs = particle_inputs(seed)
    eager = load_module(path).particle_filter(**inputs)
    compiled = compile_o0(path).session().particle_filter(**inputs)
    np.testing.assert_array_equal(eager["indices"], compiled["indices"])
    for out in ("means", "indices", "particles"):
        assert same_bits(eager[out], compiled[out]), out


RK45_CASES = [dict(y0=np.float32([1.0, 0.0]), t1=np.float32(20.0), damping=np.float32(0.5),
                   drive=np.float32(1.2), rtol=np.float32(1e-4)),
              dict(y0=np.float32([3.0, -1.0]), t1=np.float32(60.0), damping=np.float32(0.05),
                   drive=np.float32(1.5), rtol=np.float32(1e-6))]


@pytest.mark.parametrize("case", range(len(RK45_CASES)))
def test_rk45_takes_the_same_steps(case):
    path = os.path.join(OWN_PROGRAMS, "rk45.py")
    inputs = RK45_CASES[case]
    eager = load_module(path).integrate(**inputs)
    compiled = compile_o0(path).session().integrate(**inputs)
    assert int(eager["accepted"]) == int(compiled["accepted"]) > 10
    assert int(eager["rejected"]) == int(compiled["rejected"])
    for out in ("y", "t", "accepted", "rejected"):
        assert same_bits(eager[out], compiled[out]), out


def test_numpy_backend_is_independent():
    """STAGEGRAPH_EAGER=numpy runs NumPy: its transcendentals are not the kernels' (this
    is the gap the kernel backend closes), and the particle filter then differs."""
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {os.path.join(ROOT, 'tests', 'python')!r})
        from stagegraph import _kernels
        assert _kernels.backend() == "numpy", _kernels.backend()
        import test_eager_kernels as t
        m = t.load_module({os.path.join(OWN_PROGRAMS, 'particle_filter.py')!r})
        np.save(sys.argv[1], m.particle_filter(**t.particle_inputs(1))["means"])
    """)
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"sg_numpy_means_{os.getpid()}.npy")
    subprocess.run([sys.executable, "-c", script, out], check=True, env=dict(os.environ, STAGEGRAPH_EAGER="numpy"))
    numpy_means = np.load(out)
    os.remove(out)
    path = os.path.join(OWN_PROGRAMS, "particle_filter.py")
    compiled = compile_o0(path).session().particle_filter(**particle_inputs(1))["means"]
    # The first steps agree to rounding; resampling then amplifies the ulps apart.
    np.testing.assert_allclose(numpy_means[:5], compiled[:5], rtol=1e-3, atol=1e-3)
    assert not same_bits(numpy_means, compiled)


# ---- every elementwise and reduction op, one node each ---------------------------

SHAPE = (7, 33)
# (entry, parameters, expression): parameters are (name, dtype); every tensor has SHAPE.
UNARY = ["abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "floor",
         "ceil", "round", "sign", "square"]
BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b", "floordiv": "a // b", "mod": "a % b",
          "pow": "a ** b", "maximum": "sg.maximum(a, b)", "minimum": "sg.minimum(a, b)", "less": "a < b",
          "less_equal": "a <= b", "greater": "a > b", "greater_equal": "a >= b", "equal": "a == b",
          "not_equal": "a != b"}
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "any", "all", "argmax", "argmin"]


def sweep_cases():
    cases = []
    for op in UNARY:
        for d in ("f32", "f16"):
            cases.append((f"{op}_{d}", [("a", d)], f"sg.{op}(a)"))
    cases += [("neg_f32", [("a", "f32")], "-a"), ("neg_i64", [("a", "i64")], "-a"),
              ("isnan_f32", [("a", "f32")], "sg.isnan(a)"), ("abs_i32", [("a", "i32")], "sg.abs(a)"),
              ("logical_not", [("c", "bool")], "sg.logical_not(c)"),
              ("logical_and", [("c", "bool"), ("e", "bool")], "sg.logical_and(c, e)"),
              ("logical_or", [("c", "bool"), ("e", "bool")], "sg.logical_or(c, e)"),
              ("where_f32", [("c", "bool"), ("a", "f32"), ("b", "f32")], "sg.where(c, a, b)"),
              ("clip_f32", [("a", "f32"), ("b", "f32"), ("e", "f32")], "sg.clip(a, b, e)"),
              ("clip_lo", [("a", "f32")], "sg.clip(a, -0.5, None)"),
              ("scalar_mul", [("a", "f32")], "a * 0.3"), ("scalar_pow", [("a", "f32")], "a ** 1.7"),
              ("int_div", [("i", "i64"), ("j", "i64")], "i / j"), ("exp_i32", [("i", "i32")], "sg.exp(i)"),
              ("matmul", [("a", "f32"), ("m", "f32")], "a @ m"),
              ("softmax", [("a", "f32")], "sg.softmax(a, axis=-1)"),
              ("log_softmax0", [("a", "f32")], "sg.log_softmax(a, axis=0)"),
              ("layer_norm", [("a", "f32"), ("g", "f32"), ("h", "f32")], "sg.layer_norm(a, g, h)"),
              ("cumsum", [("a", "f32")], "sg.cumsum(a, axis=1)"), ("cumsum_flat", [("a", "f32")], "sg.cumsum(a)"),
              ("cumprod", [("a", "f32")], "sg.cumprod(a, axis=1)"), ("cumprod_i32", [("i", "i32")], "sg.cumprod(i)"),
              ("searchsorted", [("a", "f32"), ("b", "f32")], "sg.searchsorted(sg.sort(a[0]), b, side='right')"),
              ("logaddexp", [("a", "f32"), ("b", "f32")], "sg.logaddexp(a, b)"),
              ("isclose", [("a", "f32"), ("b", "f32")], "sg.isclose(a, b * 1e-3 + a, rtol=1e-4)"),
              ("einsum", [("a", "f32"), ("m", "f32")], "sg.einsum('ij,jk->ki', a, m)")]
    for op, expr in BINARY.items():
        for d in ("f32", "f16", "i64"):
            if d == "i64" and op in ("floordiv", "mod", "pow"):
                continue  # the divisor and exponent checks of eager mode; exact either way
            cases.append((f"{op}_{d}", [("a", d), ("b", d)], expr))
    for op in REDUCTIONS:
        dtypes = ("bool",) if op in ("any", "all") else ("f32", "f16", "i32")
        for d in dtypes:
            for suffix, args in (("all", ""), ("0", ", axis=0"), ("1k", ", axis=-1, keepdims=True")):
                cases.append((f"{op}_{d}_{suffix}", [("c" if d == "bool" else "a", d)],
                              f"sg.{op}({'c' if d == 'bool' else 'a'}{args})"))
    for src in ("f32", "f16", "i32", "i64", "bool"):
        for dst in ("f32", "f16", "i32", "i64", "bool"):
            if src != dst:
                cases.append((f"cast_{src}_{dst}", [("x", src)], f"sg.astype(x, sg.{dst})"))
    return cases


def sweep_shape(name, param):
    if param == "m":
        return (SHAPE[1], 5)
    if param in ("g", "h"):
        return (SHAPE[1],)
    return SHAPE


def sweep_input(rng, dtype, shape):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("i32", "i64"):
        v = rng.integers(-50, 50, shape)
        v[v == 0] = 3
        return v.astype(np.int32 if dtype == "i32" else np.int64)
    v = rng.standard_normal(shape) * 3
    flat = v.reshape(-1)
    flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 88.5, -104.0]  # edges, a denormal
    return v.astype(np.float32 if dtype == "f32" else np.float16)


def test_every_op_bit_identical_to_a_one_node_program():
    cases = sweep_cases()
    lines = ["import stagegraph as sg", ""]
    for name, params, expr in cases:
        sig = ", ".join(f"{p}: sg.{d}{list(sweep_shape(name, p))}" for p, d in params)
        lines += ["@sg.function", f"def {name}({sig}):", f"    return {expr}", ""]
    source = "\n".join(lines)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.CompileWarning)
        program = sg.compile(source, opt_level=0)
    namespace = {}
    exec(compile(source, "<sweep>", "exec"), namespace)
    session = program.session()
    rng = np.random.default_rng(35)
    differ = []
    for name, params, _ in cases:
        inputs = {p: sweep_input(rng, d, sweep_shape(name, p)) for p, d in params}
        with np.errstate(all="ignore"):
            eager = np.asarray(namespace[name](**inputs))
        if not same_bits(eager, session.run(name, **inputs)):
            differ.append(name)
    assert not differ, f"eager on the kernels differs from the compiled node: {differ}"
    assert len(cases) > 150
