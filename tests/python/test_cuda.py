"""program.session(device="cuda") / "cuda:N" (SPEC §14): the CUDA device comes from
stagegraph._cuda, imported on first use, so that stagegraph._runtime loads no CUDA
library. Without a GPU (or without CUDA's libraries, or a stagegraph built without
the CUDA device) a cuda session is a RuntimeError "no CUDA device: ..."; with one
(tools/gpu-check.sh), a cuda session's outputs match the CPU's."""
import importlib.abc
import importlib.util
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import stagegraph as sg
from conftest import compile_text

PROGRAM = """
import stagegraph as sg

@sg.function
def mlp(x: sg.f32["N", 64], w1: sg.f32[64, 32], b1: sg.f32[32], w2: sg.f32[32, 8]):
    h = sg.relu(x @ w1 + b1)
    return sg.softmax(h @ w2), h.sum(axis=0)

@sg.function
def loop(x: sg.f32[16], n: sg.i64):
    for i in range(n):
        x = sg.tanh(x * 1.5 + 0.1)
    return x
"""


def _gpu_present():
    """Whether the machine has an NVIDIA GPU, asked of nvidia-smi (not of stagegraph)."""
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


GPU = _gpu_present()
HAS_CUDA_MODULE = importlib.util.find_spec("stagegraph._cuda") is not None
needs_gpu = pytest.mark.skipif(not (GPU and HAS_CUDA_MODULE),
                               reason="no GPU (nvidia-smi), or stagegraph built without the CUDA device")


@pytest.fixture(scope="module")
def program():
    return compile_text(PROGRAM)


def test_unknown_device_names_the_accepted_ones(program):
    with pytest.raises(ValueError, match=r"'tpu' is not a device: the accepted devices are 'cpu', 'cuda' or 'cuda:N'"):
        program.session(device="tpu")


@pytest.mark.parametrize("device", ["cuda:abc", "cuda:-1", "cuda:", "cuda:1.5", "cuda:0x1", "cuda: 0"])
def test_malformed_gpu_index_is_a_value_error(program, device):
    with pytest.raises(ValueError, match=r"a GPU is 'cuda' or 'cuda:N' with N a GPU index"):
        program.session(device=device)


@pytest.mark.skipif(GPU, reason="a GPU is present")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_without_a_gpu_a_cuda_session_says_why(program, device):
    with pytest.raises(RuntimeError, match=r"^no CUDA device: .+"):
        program.session(device=device)
    # Nothing is left behind: the CPU still runs.
    x = np.ones((2, 64), np.float32)
    s = program.session()
    assert s.loop(np.zeros(16, np.float32), 2).shape == (16,)
    out = s.mlp(x, np.ones((64, 32), np.float32), np.zeros(32, np.float32), np.ones((32, 8), np.float32))
    assert [v.shape for v in out.values()] == [(2, 8), (32,)]


def test_a_package_without_the_cuda_module_says_so(program, monkeypatch):
    monkeypatch.setitem(sys.modules, "stagegraph._cuda", None)  # import -> ModuleNotFoundError
    with pytest.raises(RuntimeError, match=r"^no CUDA device: this stagegraph was built without the CUDA device"):
        program.session(device="cuda")


class _NoCudaLibraries(importlib.abc.MetaPathFinder):
    """Fails the import of stagegraph._cuda as the loader does without libcudart."""

    def find_spec(self, name, path=None, target=None):
        if name == "stagegraph._cuda":
            raise ImportError("libcudart.so.13: cannot open shared object file: No such file or directory")
        return None


def test_missing_cuda_libraries_are_a_runtime_error(program, monkeypatch):
    monkeypatch.delitem(sys.modules, "stagegraph._cuda", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoCudaLibraries()] + sys.meta_path)
    with pytest.raises(RuntimeError, match=r"^no CUDA device: CUDA's libraries could not be loaded \(libcudart"):
        program.session(device="cuda:0")


@pytest.mark.skipif(not HAS_CUDA_MODULE, reason="stagegraph built without the CUDA device")
def test_a_device_from_the_cuda_module_runs_in_the_runtime_module(program, monkeypatch):
    # The hand-over a GPU takes, on any machine: _cuda's copy of the runtime makes the
    # device (here its test device: host memory behind the device interface), and
    # _runtime's Session runs on it through the device's virtual calls alone.
    try:
        import stagegraph._cuda as cuda
    except ImportError as e:  # CUDA's libraries are missing: the module cannot load
        pytest.skip(f"stagegraph._cuda does not load here: {e}")
    monkeypatch.setattr(cuda, "device", lambda index=0: cuda.test_device())
    rng = np.random.default_rng(3)
    cpu, other = program.session(), program.session(device="cuda")
    for _ in range(2):
        args = _inputs(rng)
        want, got = cpu.mlp(**args), other.mlp(**args)
        for name, w in want.items():
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6, err_msg=name)
    x = rng.standard_normal(16).astype(np.float32)
    np.testing.assert_allclose(other.loop(x, 5), cpu.loop(x, 5), rtol=1e-6, atol=1e-7)


def _needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="no readelf")
def test_runtime_module_needs_no_cuda_library():
    import stagegraph._compiler
    import stagegraph._runtime
    for module in (stagegraph._runtime, stagegraph._compiler):
        needed = _needed(module.__file__)
        assert needed, module.__file__  # readelf read it
        cuda = [n for n in needed if n.startswith(("libcuda", "libcublas", "libnv", "libcudnn"))]
        assert cuda == [], f"{module.__file__} needs {cuda}: it must load without CUDA"
    spec = importlib.util.find_spec("stagegraph._cuda")
    if spec is not None:  # the CUDA device's module is where CUDA's libraries are needed
        assert any(n.startswith("libcudart") for n in _needed(spec.origin))


@pytest.mark.skipif(not HAS_CUDA_MODULE, reason="stagegraph built without the CUDA device")
def test_cuda_module_ships_its_stub():
    import importlib.resources
    assert importlib.resources.files("stagegraph").joinpath("_cuda.pyi").is_file()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_cpu_sessions_load_no_cuda_library():
    # A fresh interpreter: this one may have imported stagegraph._cuda already.
    code = textwrap.dedent("""
        import numpy as np
        import stagegraph as sg
        p = sg.compile("import stagegraph as sg\\n@sg.function\\ndef f(x: sg.f32[3]):\\n    return x * 2\\n")
        assert (p.session().f(np.ones(3, np.float32)) == 2).all()
        print(sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcu" in l or "libnv" in l}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def _inputs(rng):
    return dict(x=rng.standard_normal((5, 64)).astype(np.float32),
                w1=rng.standard_normal((64, 32)).astype(np.float32) / 8,
                b1=rng.standard_normal(32).astype(np.float32),
                w2=rng.standard_normal((32, 8)).astype(np.float32) / 4)


@needs_gpu
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_session_matches_the_cpu(program, device):
    rng = np.random.default_rng(7)
    cpu, gpu = program.session(), program.session(device=device)
    for _ in range(2):  # a second run reuses the Session's device buffers
        args = _inputs(rng)
        want, got = cpu.mlp(**args), gpu.mlp(**args)  # two outputs: dicts by name
        assert list(got) == list(want) and len(want) == 2
        for name, w in want.items():
            g = got[name]
            assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape, name
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)
    x = rng.standard_normal(16).astype(np.float32)
    np.testing.assert_allclose(gpu.loop(x, 5), cpu.loop(x, 5), rtol=1e-5, atol=1e-6)


@needs_gpu
def test_a_gpu_index_past_the_gpus_is_a_value_error(program):
    with pytest.raises(ValueError, match=r"no CUDA device 4096: this machine has \d+"):
        program.session(device="cuda:4096")
