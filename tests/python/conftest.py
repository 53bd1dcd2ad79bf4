"""Shared by the Python tests: the installed wheel must hold the modules this build
made (ctest sets SG_BUILT_MODULES; compared by GNU build ID, as the wheel's copies
are stripped), so a stale install never passes for a new build."""
import os
import textwrap

import pytest

import stagegraph as sg

ROOT = os.environ.get("SG_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


_BUILD_ID_NOTE = b"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00"


def _build_id(path):
    with open(path, "rb") as f:
        data = f.read()
    at = data.find(_BUILD_ID_NOTE)
    return data[at + len(_BUILD_ID_NOTE):at + len(_BUILD_ID_NOTE) + 20] if at >= 0 else data


def pytest_sessionstart(session):
    built = os.environ.get("SG_BUILT_MODULES")
    if not built:
        return
    import importlib.util
    # Found, not imported: stagegraph._cuda loads CUDA's libraries.
    names = ("stagegraph._runtime", "stagegraph._compiler", "stagegraph._cuda")
    for path, name in zip(built.split(":"), names):
        spec = importlib.util.find_spec(name)
        installed = spec.origin if spec is not None else None
        if installed is None or _build_id(path) != _build_id(installed):
                raise pytest.UsageError(f"the installed {installed or name} is not the built {path}: "
                                        "run `make python-wheel` (tests/python/build_wheel.sh) first")


def compile_text(source, **kwargs):
    """sg.compile on dedented source text."""
    return sg.compile(textwrap.dedent(source).lstrip("\n"), **kwargs)


@pytest.fixture
def tmp_program(tmp_path):
    """Writes source text to a .py file and returns its path."""
    def write(source, name="model.py"):
        p = tmp_path / name
        p.write_text(textwrap.dedent(source).lstrip("\n"))
        return p
    return write
