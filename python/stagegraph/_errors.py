"""The errors of the compiled path (SPEC §14): sg.CompileError and sg.RunError."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import List, Optional

_LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<column>\d+): error: (?P<message>.*)$", re.S)


@dataclass(frozen=True)
class Note:
    """A note of a diagnostic: where a shape or value came from."""
    file: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One compiler diagnostic (graph-compile --diagnostics=json, one object)."""
    file: str
    line: int
    column: int
    severity: str  # "error" or "warning" ("error" for a warning under werror)
    message: str
    notes: List[Note] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"


def parse_diagnostics(json_lines: str) -> List[Diagnostic]:
    out = []
    for line in json_lines.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        out.append(Diagnostic(d["file"], d["line"], d["column"], d["severity"], d["message"],
                              [Note(n["file"], n["line"], n["column"], n["message"]) for n in d["notes"]]))
    return out


class CompileError(Exception):
    """A program that does not compile. str(e) and .text are graph-compile's gcc-style
    output; .diagnostics the same as a list of Diagnostic."""

    def __init__(self, text: str, diagnostics: Optional[List[Diagnostic]] = None):
        super().__init__(text)
        self.text = text
        self.diagnostics = list(diagnostics or [])


class CompileWarning(UserWarning):
    """Warnings of a program that compiled (the gcc-style text)."""


class RunError(RuntimeError):
    """A run that failed: a shape or index error found at run time, a failed assert, a
    limit, a cancel or a timeout. .code names the kind ("runtime_error",
    "limit_exceeded", "out_of_memory", "cancelled", "deadline_exceeded"); .file, .line,
    .column locate the node that failed (None when the message has no location);
    .message is the message after "error: "."""

    def __init__(self, text: str, code: str = "runtime_error"):
        super().__init__(text)
        self.text = text
        self.code = code.replace(" ", "_")
        m = _LOCATED.match(text.split("\n", 1)[0])
        if m:
            self.file: Optional[str] = m["file"]
            self.line: Optional[int] = int(m["line"])
            self.column: Optional[int] = int(m["column"])
            self.message = m["message"]
        else:
            self.file = self.line = self.column = None
            self.message = text
