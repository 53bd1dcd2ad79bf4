"""AutoGraph's reference test suite, ported (tests/autograph/, one program per
AutoGraph test file): every entry is compiled with graph-compile, run with graph-run
on the inputs the original test used, and compared with eager mode (SPEC.md §1).

A program states its checks in comment lines:

    # cases: ENTRY a=1 l=[1,2] | a=0 l=[]   one run per `|`-separated input set (Python
                                            literals without spaces, converted to the
                                            entry's dtypes; symbolic dims follow them)
    # error: ENTRY REGEX                    an illegal case: compiling ENTRY must fail with a
                                            located error (FILE:LINE:COL: error:) matching REGEX
    # refused: ENTRY REGEX                  AutoGraph accepts ENTRY, Stagegraph refuses it at
                                            compile time on purpose (the reason is in a comment
                                            beside it), with a located error matching REGEX
    # run-error: ENTRY a=0 ~ REGEX          graph-run must stop with exit 3 and a message
                                            matching REGEX, where eager mode raises
    # autograph-run-error: ENTRY a=0 ~ REGEX
                                            the same where AutoGraph raises at run time and
                                            Python does not (a dict key a loop adds, on a run
                                            that never added it): eager mode must not raise

An entry without parameters and without `cases` runs once. NEEDS_LANG lists the
entries that need constructs implemented on their own (classes, named tuples,
lambdas, closures, raise/try, del, global): until then they must be refused at
compile time with a located error; one that compiles is reported, so that the list
shrinks as they land. Prints per-file counts. SG_AUTOGRAPH=name,name runs only those.
"""

import ast
import contextlib
import io
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

AUTOGRAPH_DIR = os.path.join(lib.SOURCE_DIR, "tests", "autograph")

# Entries that need classes, named tuples, lambdas, raise/try, del or global (program ->
# entries; "*" is every entry). The compiler refuses a whole module over one such
# construct, so an AutoGraph file's functions that need them are in NAME_lang.py.
NEEDS_LANG = {}  # every entry that needed them passes now


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def list_programs():
    names = sorted(f for f in os.listdir(AUTOGRAPH_DIR) if f.endswith(".py") and not f.startswith("_"))
    wanted = os.environ.get("SG_AUTOGRAPH")
    if wanted:
        keep = {w.strip().removesuffix(".py") for w in wanted.split(",") if w.strip()}
        names = [n for n in names if n[:-3] in keep]
    return [os.path.join(AUTOGRAPH_DIR, n) for n in names]


def parse_inputs(text, where):
    """`a=1 l=[1,2]` -> {"a": 1, "l": [1, 2]}."""
    inputs = {}
    for item in text.split():
        name, sep, value = item.partition("=")
        if not sep:
            raise lib.E2EError(f"{where}: bad input {item!r} (NAME=LITERAL)")
        try:
            inputs[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise lib.E2EError(f"{where}: input {item!r} is not a Python literal") from None
    return inputs


def directives(py_path):
    """(cases: entry -> [inputs], errors: entry -> regex, refused: entry -> regex,
    run_errors: entry -> [(inputs, regex, whether eager mode raises too)])."""
    cases, errors, refused, run_errors = {}, {}, {}, {}
    with open(py_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = f"{stem(py_path)}.py:{number}"
            m = re.match(r"\s*#\s*(cases|error|refused|run-error|autograph-run-error):\s*(\w+)\s*(.*?)\s*$", line)
            if not m:
                continue
            kind, entry, rest = m.groups()
            if kind == "cases":
                cases.setdefault(entry, []).extend(parse_inputs(part, where) for part in rest.split("|"))
            elif kind == "error":
                errors[entry] = rest
            elif kind == "refused":
                refused[entry] = rest
            else:
                inputs, sep, regex = rest.partition("~")
                if not sep:
                    raise lib.E2EError(f"{where}: run-error needs `INPUTS ~ REGEX`")
                eager_raises = kind == "run-error"
                run_errors.setdefault(entry, []).append((parse_inputs(inputs, where), regex.strip(), eager_raises))
    return cases, errors, refused, run_errors


def as_inputs(sig, given, where):
    """The entry's inputs from Python literals, in the signature's dtypes."""
    names = [name for name, _, _ in sig]
    if sorted(names) != sorted(given):
        raise lib.E2EError(f"{where}: inputs {sorted(given)} do not match the parameters {names}")
    inputs = {}
    for name, dtype, dims in sig:
        value = np.array(given[name], dtype=np.dtype(dtype.np))
        if value.ndim != len(dims) or any(isinstance(d, int) and d != s for d, s in zip(dims, value.shape)):
            raise lib.E2EError(f"{where}: input {name} has shape {list(value.shape)}, the entry takes {list(dims)}")
        inputs[name] = value
    return inputs


def describe_inputs(given):
    return " ".join(f"{k}={v!r}".replace(" ", "") for k, v in given.items())


def eager_call(fn, inputs):
    with contextlib.redirect_stdout(io.StringIO()):
        return lib.eager_outputs(fn(**{k: v.copy() for k, v in inputs.items()}))


def compile_entries(py_path, entries, graph):
    return lib.run_tool("graph-compile", [py_path, "-o", graph, *[a for e in entries for a in ("--entry", e)]])


def located_error(proc, py_path, regex):
    """None when `proc` is a located compile error matching regex, else why not."""
    if proc.returncode != 1:
        return f"expected a compile error, got {lib.describe_result(proc)}"
    stderr = proc.stderr or ""
    errors = [ln for ln in stderr.splitlines() if re.match(r".+:\d+:\d+: error: ", ln)]
    if not errors:
        return f"the error is not located (FILE:LINE:COL: error:): {stderr.strip()[:300]}"
    if regex and not re.search(regex, stderr):
        return f"the error does not match /{regex}/: {errors[0]}"
    return None


def compare(name, expected, actual):
    """lib.compare, except for one case: an eager i64 result against an i32 one of the
    same values. AutoGraph's `s = 0; for c in l: s += c` over an i32 tensor leaves the
    Python int 0 (i64 at the boundary) where the loop never adds, an i32 tensor where it
    does (and a list of such numbers stacks to i64); a graph has one dtype for every
    path, the tensor's (SPEC §3)."""
    if (expected.dtype == np.int64 and actual.dtype == np.int32 and expected.shape == actual.shape
            and np.array_equal(expected, actual)):
        return None
    return lib.compare(name, expected, actual)


class Counts:
    def __init__(self):
        self.entries = self.passed = self.diagnostics = self.refused = self.lang = self.failed = 0

    def line(self, name):
        return (f"{name:44} {self.entries:3} entries: {self.passed:3} pass, {self.diagnostics:2} expected "
                f"diagnostics, {self.refused:2} refused on purpose, {self.lang:2} need lang, {self.failed:2} fail")


def check_program(report, py_path, work_root, totals):
    name = stem(py_path)
    counts = Counts()
    work = os.path.join(work_root, name)
    os.makedirs(work)
    try:
        entries = lib.entry_names(py_path)
        cases, errors, refused, run_errors = directives(py_path)
        for entry in list(cases) + list(errors) + list(refused) + list(run_errors):
            if entry not in entries:
                raise lib.E2EError(f"a directive names {entry}, which is not an @sg.function entry")
        module = lib.load_eager_module(py_path)
    except lib.E2EError as e:
        report.fail(f"{name} setup", str(e))
        counts.failed += 1
        return counts
    except Exception as e:
        report.fail(f"{name} eager import", f"{type(e).__name__}: {e}")
        counts.failed += 1
        return counts

    lang = NEEDS_LANG.get(name, set())
    lang_all = "*" in lang
    runnable = [e for e in entries if e not in errors and e not in refused and e not in lang and not lang_all]
    shared = os.path.join(work, "all.sgraph")
    together = bool(runnable) and compile_entries(py_path, runnable, shared).returncode == 0

    for entry in entries:
        counts.entries += 1
        case = f"{name}.{entry}"
        graph = shared
        if entry in errors or entry in refused:
            proc = compile_entries(py_path, [entry], os.path.join(work, f"{entry}.sgraph"))
            why = located_error(proc, py_path, errors.get(entry, refused.get(entry)))
            if entry in lang or lang_all:
                if why is None:
                    report.fail(case, "gives its diagnostic now: remove it from NEEDS_LANG")
                    counts.failed += 1
                else:
                    report.ok(case, "needs lang (refused today)")
                    counts.lang += 1
                continue
            if report.check(case, why is None, why or "", "expected diagnostic" if entry in errors else "refused"):
                if entry in errors:
                    counts.diagnostics += 1
                else:
                    counts.refused += 1
            else:
                counts.failed += 1
            continue
        if entry in lang or lang_all:
            proc = compile_entries(py_path, [entry], os.path.join(work, f"{entry}.sgraph"))
            if proc.returncode == 1 and located_error(proc, py_path, "") is None:
                report.ok(case, "needs lang (refused today)")
                counts.lang += 1
            elif proc.returncode == 0:
                report.fail(case, "compiles now: remove it from NEEDS_LANG")
                counts.failed += 1
            else:
                report.fail(case, lib.describe_result(proc))
                counts.failed += 1
            continue
        if not together:
            graph = os.path.join(work, f"{entry}.sgraph")
            proc = compile_entries(py_path, [entry], graph)
            if proc.returncode != 0:
                report.fail(case, f"graph-compile {lib.describe_result(proc)}")
                counts.failed += 1
                continue
        fn = getattr(module, entry)
        sig = lib.signature(fn)
        runs = cases.get(entry) or ([{}] if not sig and entry not in run_errors else [])
        if not runs and entry not in run_errors:
            report.fail(case, "takes inputs but no `# cases:` line gives them")
            counts.failed += 1
            continue
        ok = True
        for k, given in enumerate(runs):
            label = f"{case}({describe_inputs(given)})"
            try:
                inputs = as_inputs(sig, given, label)
                expected = eager_call(fn, inputs)
                proc, out_dir = lib.run_graph(graph, entry, inputs, os.path.join(work, f"{entry}_{k}"))
                if proc.returncode != 0:
                    raise lib.E2EError(f"graph-run {lib.describe_result(proc)}")
                actual = lib.load_outputs(out_dir, list(expected))
                problems = [p for n in expected if (p := compare(n, expected[n], actual[n]))]
                if problems:
                    raise lib.E2EError("; ".join(problems))
            except lib.E2EError as e:
                report.fail(label, str(e))
                ok = False
            except Exception as e:
                report.fail(label, f"{type(e).__name__}: {e}")
                ok = False
        for k, (given, regex, eager_raises) in enumerate(run_errors.get(entry, [])):
            label = f"{case}({describe_inputs(given)}) run error"
            try:
                inputs = as_inputs(sig, given, label)
                raised = False
                try:
                    eager_call(fn, inputs)
                except Exception:
                    raised = True
                if raised != eager_raises:
                    raise lib.E2EError(f"eager mode {'does not raise' if eager_raises else 'raises'} on these inputs")
                proc, _ = lib.run_graph(graph, entry, inputs, os.path.join(work, f"{entry}_e{k}"))
                if proc.returncode != 3 or not re.search(regex, proc.stderr or ""):
                    raise lib.E2EError(f"expected exit 3 matching /{regex}/, got {lib.describe_result(proc)}")
            except lib.E2EError as e:
                report.fail(label, str(e))
                ok = False
        if ok:
            n = len(runs) + len(run_errors.get(entry, []))
            report.ok(case, f"{n} run{'s' if n != 1 else ''}")
            counts.passed += 1
        else:
            counts.failed += 1
    return counts


def main():
    report = lib.Report("AutoGraph reference tests")
    programs = list_programs()
    if not programs:
        print("no programs found in", AUTOGRAPH_DIR)
        return 1
    per_file = []
    with tempfile.TemporaryDirectory(prefix="sg_autograph_") as work_root:
        for py_path in programs:
            per_file.append((stem(py_path), check_program(report, py_path, work_root, None)))
    status = report.finish()
    print("\nper AutoGraph test file:")
    total = Counts()
    for name, c in per_file:
        print("  " + c.line(name))
        for field in vars(total):
            setattr(total, field, getattr(total, field) + getattr(c, field))
    print("  " + total.line("total"))
    return status


if __name__ == "__main__":
    sys.exit(main())
