"""The compiled path in process (SPEC §14): sg.load, sg.compile and sg.jit over the
extension modules _runtime (Program, Session) and _compiler (graph-compile's
pipeline, returning the graph's bytes)."""
from __future__ import annotations

import functools
import inspect
import os
import sys
import tempfile
import threading
import types
import warnings
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Union

from . import _compiler, _runtime
from ._errors import CompileError, CompileWarning, Diagnostic, Note, RunError, parse_diagnostics

Program = _runtime.Program
Session = _runtime.Session
TensorSpec = _runtime.TensorSpec
Entry = _runtime.Entry

__all__ = ["load", "compile", "jit", "Program", "Session", "TensorSpec", "Entry", "CompileError",
           "CompileWarning", "RunError", "Diagnostic", "Note"]

PathLike = Union[str, "os.PathLike[str]"]


def load(path_or_bytes: Union[PathLike, bytes, bytearray, memoryview], *, verify_data: bool = True,
         dynamic_quantization: bool = True) -> Program:
    """Loads a graph (.sgraph) from a file (memory-mapped) or from bytes. Every check
    graph-run makes on load is made; a bad file is a ValueError saying what is wrong,
    a missing one FileNotFoundError. dynamic_quantization=False: int8/int4 dense
    layers compute in f32 over the dequantized weights instead of quantizing their
    activations per run (SPEC §13; graph-run --weight-only-quant)."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return _runtime.load_bytes(bytes(path_or_bytes), verify_data, dynamic_quantization)
    if isinstance(path_or_bytes, (str, os.PathLike)):
        return _runtime.load_file(os.fspath(path_or_bytes), verify_data, dynamic_quantization)
    raise TypeError(f"sg.load takes a path or bytes, not {type(path_or_bytes).__name__}")


def _source_of(source: Any):
    """(path, text, default entries) for what sg.compile was given."""
    fn = getattr(source, "fn", None) if hasattr(source, "fn") and callable(source) else None
    if fn is not None or isinstance(source, types.FunctionType):
        f = fn if fn is not None else source
        path = inspect.getsourcefile(f)
        if path is None:
            raise TypeError(f"sg.compile: the source of {f.__qualname__} is not in a file")
        return path, _read(path), [f.__name__]
    if isinstance(source, types.ModuleType):
        path = getattr(source, "__file__", None)
        if path is None:
            raise TypeError(f"sg.compile: module {source.__name__} has no source file")
        return path, _read(path), None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source):
        path = os.fspath(source)
        return path, _read(path), None
    if isinstance(source, str):
        return "<string>", source, None
    raise TypeError("sg.compile takes a module, a path, source text or an @sg.function, "
                    f"not {type(source).__name__}")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise CompileError(f"graph-compile: error: cannot read '{path}': {e.strerror}") from None


def compile(source: Any, weights: Union[None, PathLike, Mapping[str, Any]] = None, opt_level: int = 2,  # noqa: A001
            entries: Optional[Iterable[str]] = None, *, werror: bool = False,
            explain_staging: bool = False) -> Program:
    """Compiles in process with graph-compile's options and returns the Program.

    source: a module, a path to a .py file, source text, or an @sg.function (then its
    file, with that function as the one entry). weights: a safetensors path, or a dict
    of arrays (written to a temporary safetensors file). A program that does not
    compile raises CompileError (.text: the gcc-style output; .diagnostics: the list);
    warnings alone are issued as CompileWarning."""
    path, text, default_entries = _source_of(source)
    entry_list = list(entries) if entries is not None else (default_entries or [])
    if isinstance(opt_level, bool) or not isinstance(opt_level, int):
        raise TypeError(f"opt_level must be 0, 1 or 2, not {opt_level!r}")
    tmp = None
    try:
        if weights is None:
            weights_path = ""
        elif isinstance(weights, Mapping):
            from ._staging import write_safetensors
            fd, tmp = tempfile.mkstemp(suffix=".safetensors")
            os.close(fd)
            write_safetensors(tmp, dict(weights))
            weights_path = tmp
        else:
            weights_path = os.fspath(weights)
            if not os.path.isfile(weights_path):
                raise CompileError(f"graph-compile: error: cannot read weights file '{weights_path}': "
                                   f"{'it is not a regular file' if os.path.exists(weights_path) else 'No such file or directory'}")
        r = _compiler.compile_source(path, text, entry_list, weights_path, opt_level, werror, explain_staging)
    finally:
        if tmp is not None:
            os.unlink(tmp)
    if r.stdout or r.explain:
        sys.stdout.write(r.explain + r.stdout)
    if not r.ok:
        if r.error:
            raise CompileError(r.text + f"graph-compile: error: {r.error}\n", parse_diagnostics(r.json))
        raise CompileError(r.text, parse_diagnostics(r.json))
    if r.text:
        warnings.warn(CompileWarning(r.text), stacklevel=2)
    return load(r.graph)


def _signature(value: Any):
    shape = getattr(value, "shape", None)
    if shape is not None:
        return (type(value), str(getattr(value, "dtype", "")), tuple(shape))
    return (type(value),)


class Jitted:
    """sg.jit(f): f compiled (once per input signature, then cached) and run on the
    runtime. Each thread calling it gets Sessions of its own."""

    def __init__(self, fn: Callable, *, opt_level: int = 2, threads: int = 1):
        self._fn = fn
        self._name = getattr(getattr(fn, "fn", fn), "__name__")
        self._opt_level = opt_level
        self._threads = threads
        self._programs: Dict[Any, Program] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        functools.update_wrapper(self, getattr(fn, "fn", fn))

    @property
    def compiles(self) -> int:
        """How many signatures were compiled."""
        return len(self._programs)

    def __call__(self, *args: Any, **kwargs: Any):
        key = tuple(_signature(a) for a in args) + tuple((k, _signature(v)) for k, v in sorted(kwargs.items()))
        calls = getattr(self._local, "calls", None)
        if calls is None:
            calls = self._local.calls = {}
        call = calls.get(key)
        if call is None:
            with self._lock:
                program = self._programs.get(key)
                if program is None:
                    program = compile(self._fn, opt_level=self._opt_level)
                    self._programs[key] = program
            call = calls[key] = getattr(program.session(threads=self._threads), self._name)
        return call(*args, **kwargs)


def jit(fn: Optional[Callable] = None, *, opt_level: int = 2, threads: int = 1):
    """fast = sg.jit(f) (or @sg.jit above @sg.function): f compiled in process and run
    on the runtime, compiled once per input signature."""
    if fn is None:
        return lambda f: Jitted(f, opt_level=opt_level, threads=threads)
    return Jitted(fn, opt_level=opt_level, threads=threads)
