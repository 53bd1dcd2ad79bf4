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
    import stagegraph._compiler
    import stagegraph._runtime
    for path, module in zip(built.split(":"), (stagegraph._runtime, stagegraph._compiler)):
        if _build_id(path) != _build_id(module.__file__):
                raise pytest.UsageError(f"the installed {module.__file__} is not the built {path}: "
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
