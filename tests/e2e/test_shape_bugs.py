"""Measures the compiler's shape analysis (SPEC.md §8) on a corpus of shape bugs,
the way Pythia was measured on the TensorFlow bug study.

tests/shape_bugs/NN_name.py is a buggy staged program, NN_name_fixed.py its fixed
twin. Each program states what graph-compile must report, in comments:

    # expect: error                   on a code line: an error at that line
    # expect: warning@12|15           anywhere: a warning at line 12 or line 15
    # expect: runtime with N=3,M=2    compiles without errors or warnings; graph-run,
                                      with those symbolic dims, exits 3 and prints
                                      FILE:LINE:COL: error: at that line
    # expect: clean                   (fixed twins) no error and no warning at all
    # allow: warning                  a diagnostic that may, but need not, be reported
    # expect: error@12 naming norm    the message must also name `norm` (where §5/§8
                                      say the diagnostic names a variable)

Grading (Pythia's definitions): an expectation met by a diagnostic of its severity
at one of its lines is a true positive; one that is not is a miss (false negative);
an error or warning at a line no expectation or allowance of that severity covers
(in a fixed twin: any error or warning) is a false alarm. recall = TP / (TP + misses),
precision = TP / (TP + false alarms). A diagnostic that reports a limitation of the
compiler ("... not supported yet", "... does not have yet") is never a true positive:
it says nothing about the bug, even where it happens to share its line.

The mutation grader changes one static dim of an entry annotation or one axis
argument in each fixed twin and each example (a fixed seed per file), runs the
mutant in eager mode on random inputs that match its annotations, and checks that
graph-compile reports an error, or the graph run exits 3, exactly where eager mode
raises, and that it reports no error where eager mode runs.

tests/shape_bugs/KNOWN_GAPS.txt lists, one per line with a reason, the programs
(NAME) and mutants (mutant:NAME) the analysis still gets wrong: they are reported as
known gaps and do not fail the test, but a listed entry that now passes does, so the
list stays exactly the work left. SG_SHAPE_BUGS=01,12 grades only the programs whose
names start with those prefixes (the mutants of those files included).
"""

import ast
import io
import json
import os
import random
import re
import sys
import tempfile
import tokenize
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

CORPUS_DIR = os.path.join(lib.SOURCE_DIR, "tests", "shape_bugs")
EXAMPLES_DIR = os.path.join(lib.SOURCE_DIR, "examples")
KNOWN_GAPS = os.path.join(CORPUS_DIR, "KNOWN_GAPS.txt")
PROGRAM_NAME = re.compile(r"^\d\d_\w+\.py$")
EXPECT = re.compile(r"^#\s*(expect|allow):\s*(.*?)\s*$")
SPEC = re.compile(r"^(error|warning|runtime|clean)(?:@(\d+(?:\|\d+)*))?(?:\s+with\s+(\S+))?"
                  r"(?:\s+naming\s+(\w+))?$")
LIMITATION = re.compile(r"not supported yet|does not have yet|not implemented")
RUNTIME_LOCATION = re.compile(r"^(.*?):(\d+):(\d+): error:", re.M)


class CorpusError(Exception):
    """The corpus itself is wrong (a bad expectation, a fixed twin that fails in
    eager mode...): always a failure, never a known gap."""


# ---- expectations ----------------------------------------------------------------

class Expectation:
    def __init__(self, kind, lines, binding, required, naming=None):
        self.kind, self.lines, self.binding, self.required = kind, lines, binding, required
        self.naming = naming

    def met_by(self, d):
        """True when diagnostic `d` reports this expectation."""
        if d.severity != self.kind or d.line not in self.lines or LIMITATION.search(d.message):
            return False
        return self.naming is None or re.search(rf"\b{self.naming}\b", d.message) is not None

    def __str__(self):
        where = "|".join(str(n) for n in sorted(self.lines))
        text = f"{self.kind}@{where}" if where else self.kind
        if self.binding:
            text += " with " + ",".join(f"{k}={v}" for k, v in self.binding.items())
        if self.naming:
            text += f" naming {self.naming}"
        return text if self.required else f"allow {text}"


def parse_expectations(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    rows = source.split("\n")
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        m = EXPECT.match(tok.string)
        if not m:
            continue
        spec = SPEC.match(m.group(2))
        if not spec:
            raise CorpusError(f"line {tok.start[0]}: bad expectation {m.group(2)!r}")
        kind, lines, binding, naming = spec.groups()
        on_code_line = tok.line[:tok.start[1]].strip() != ""
        if lines:
            targets = {int(n) for n in lines.split("|")}
        elif kind == "clean":
            targets = set()
        elif on_code_line:
            targets = {tok.start[0]}
        else:
            raise CorpusError(f"line {tok.start[0]}: {kind} needs @LINE when not on a code line")
        if any(not 1 <= n <= len(rows) or rows[n - 1].split("#")[0].strip() == "" for n in targets):
            raise CorpusError(f"line {tok.start[0]}: a line of {m.group(2)!r} holds no code")
        if kind == "runtime" and len(targets) != 1:
            raise CorpusError(f"line {tok.start[0]}: a runtime expectation names one line")
        if (kind == "runtime") != (binding is not None):
            raise CorpusError(f"line {tok.start[0]}: 'with NAME=SIZE,...' goes with runtime only")
        dims = {}
        for item in (binding or "").split(","):
            if item:
                name, _, size = item.partition("=")
                if not size.isdigit():
                    raise CorpusError(f"line {tok.start[0]}: bad binding {item!r}")
                dims[name] = int(size)
        found.append(Expectation(kind, targets, dims, m.group(1) == "expect", naming))
    return found


def check_expectations(expectations, fixed):
    required = [e for e in expectations if e.required]
    if fixed:
        if [e.kind for e in expectations] != ["clean"]:
            raise CorpusError("a fixed twin states exactly '# expect: clean'")
    elif not required or any(e.kind == "clean" for e in expectations):
        raise CorpusError("a buggy program states at least one error, warning or runtime expectation")
    if any(e.kind == "runtime" and not e.required for e in expectations):
        raise CorpusError("'allow: runtime' means nothing")


# ---- compiling -------------------------------------------------------------------

class Diagnostic:
    def __init__(self, severity, line, message):
        self.severity, self.line, self.message = severity, line, message

    def __str__(self):
        return f"{self.severity}@{self.line}: {self.message}"


def compile_diagnostics(path, out):
    """Runs graph-compile --diagnostics=json; returns (proc, [Diagnostic]) with the
    errors and warnings located in `path` (elsewhere or nowhere: line 0)."""
    proc = lib.run_tool("graph-compile", [path, "-o", out, "--diagnostics=json"])
    diags = []
    for text in (proc.stderr or "").splitlines():
        if not text.startswith("{"):
            continue
        try:
            d = json.loads(text)
        except ValueError:
            continue
        if d.get("severity") not in ("error", "warning"):
            continue
        line = d.get("line", 0) if d.get("file") == path else 0
        diags.append(Diagnostic(d["severity"], line, d.get("message", "")))
    if proc.returncode != 0 and not any(d.severity == "error" for d in diags):
        # A crash, a timeout or an error printed outside the JSON stream: an error
        # nobody can act on, so a false alarm wherever it happens.
        diags.append(Diagnostic("error", 0, lib.describe_result(proc)))
    return proc, diags


def run_compiled(graph, fn, entry, binding, seed, options, work):
    """Makes inputs for `binding`, runs the graph; returns (proc, eager_error)."""
    sig = lib.signature(fn)
    inputs = lib.make_inputs(sig, binding, seed, options)
    eager_error = None
    try:
        fn(**{k: v.copy() for k, v in inputs.items()})
    except Exception as e:  # noqa: BLE001 - any eager failure is the bug showing
        eager_error = f"{type(e).__name__}: {e}"
    proc, _ = lib.run_graph(graph, entry, inputs, work)
    return proc, eager_error


# ---- grading one program ---------------------------------------------------------

class Result:
    def __init__(self, name):
        self.name = name
        self.tp = 0
        self.misses = []        # (expectation, why)
        self.false_alarms = []  # Diagnostic or str
        self.corpus_error = None
        self.found = []         # what met each expectation

    @property
    def ok(self):
        return not self.misses and not self.false_alarms and not self.corpus_error


def grade_runtime(exp, path, graph, diags, options, work):
    """(met, detail) for a runtime expectation: the run-time error, or why not."""
    if any(d.severity == "error" for d in diags):
        return False, "graph-compile reported an error, so nothing ran"
    entries = lib.entry_names(path)
    if len(entries) != 1:
        raise CorpusError("a runtime expectation needs exactly one entry point")
    module = lib.load_eager_module(path)
    fn = getattr(module, entries[0])
    symbols = {d for _, _, dims in lib.signature(fn) for d in dims if isinstance(d, str)}
    if symbols != set(exp.binding):
        raise CorpusError(f"the runtime binding must give exactly the dims {sorted(symbols)}")
    proc, eager_error = run_compiled(graph, fn, entries[0], exp.binding,
                                     lib.seed_for(path, "runtime"), options, work)
    if eager_error is None:
        raise CorpusError(f"eager mode runs with {exp.binding}: the bug does not show")
    line = next(iter(exp.lines))
    for m in RUNTIME_LOCATION.finditer(proc.stderr or ""):
        if int(m.group(2)) == line and os.path.basename(m.group(1)) == os.path.basename(path):
            if proc.returncode == 3:
                end = (proc.stderr + "\n").index("\n", m.start())
                return True, "graph-run exit 3: " + proc.stderr[m.end():end].strip()
    return False, f"graph-run {lib.describe_result(proc)} (eager: {eager_error})"


def check_fixed_in_eager(path, options):
    module = lib.load_eager_module(path)
    for entry in lib.entry_names(path):
        fn = getattr(module, entry)
        sig = lib.signature(fn)
        binding = lib.bindings(sig, options)[0]
        try:
            fn(**lib.make_inputs(sig, binding, lib.seed_for(path, entry), options))
        except Exception as e:  # noqa: BLE001
            raise CorpusError(f"eager mode fails on {entry}: {type(e).__name__}: {e}") from None


def grade_program(path, fixed, work):
    name = os.path.basename(path)[:-3]
    result = Result(name)
    try:
        expectations = parse_expectations(path)
        check_expectations(expectations, fixed)
        options = lib.program_options(path)
        if fixed:
            check_fixed_in_eager(path, options)
        graph = os.path.join(work, name + ".sgraph")
        _, diags = compile_diagnostics(path, graph)
        static = [e for e in expectations if e.kind in ("error", "warning")]
        for exp in expectations:
            if exp.kind in ("error", "warning") and exp.required:
                found = [d for d in diags if exp.met_by(d)]
                if found:
                    result.tp += 1
                    result.found.append(found[0])
                else:
                    result.misses.append((exp, "not reported"))
            elif exp.kind == "runtime":
                # The run's line is no place for a compile-time diagnostic: the dims
                # may agree, so §8 asks for neither an error nor a warning there.
                met, detail = grade_runtime(exp, path, graph, diags, options, os.path.join(work, name))
                if met:
                    result.tp += 1
                    result.found.append(f"runtime@{next(iter(exp.lines))}: {detail}")
                else:
                    result.misses.append((exp, detail))
        for d in diags:
            if not any(e.met_by(d) for e in static):
                result.false_alarms.append(d)
    except CorpusError as e:
        result.corpus_error = str(e)
    except lib.E2EError as e:
        result.corpus_error = f"cannot grade: {e}"
    return result


# ---- mutation grader -------------------------------------------------------------

def _is_entry(node):
    return isinstance(node, ast.FunctionDef) and any(
        (isinstance(d, ast.Attribute) and d.attr == "function") or (isinstance(d, ast.Name) and d.id == "function")
        for d in node.decorator_list)


def _int_nodes(node):
    """Int literals of a dim list or an axis value: 3, -1, (1, 2)."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    for item in items:
        if isinstance(item, ast.Constant) and type(item.value) is int:
            yield item, item.value
        elif (isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub)
              and isinstance(item.operand, ast.Constant) and type(item.operand.value) is int):
            yield item, -item.operand.value


def mutation_sites(source):
    """[(kind, node, value)]: static dims of entry annotations, axis arguments of
    calls inside module-level functions (the __main__ demo is left alone)."""
    sites = []
    for fn in ast.parse(source).body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        if _is_entry(fn):
            for arg in fn.args.args:
                if isinstance(arg.annotation, ast.Subscript):
                    sites += [("dim", n, v) for n, v in _int_nodes(arg.annotation.slice)]
        for call in ast.walk(fn):
            if isinstance(call, ast.Call):
                for kw in call.keywords:
                    if kw.arg == "axis":
                        sites += [("axis", n, v) for n, v in _int_nodes(kw.value)]
    return sites


def make_mutant(path):
    """(description, mutated source) for `path`, or None without a site. The
    choice depends only on the file's name, so files do not shift each other."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    sites = mutation_sites(source)
    if not sites:
        return None
    rng = random.Random(zlib.crc32(os.path.basename(path).encode()))
    kind, node, old = rng.choice(sites)
    if kind == "dim":
        choices = sorted({old + 1, old * 2, old - 1} - {old, 0})
    else:
        choices = [a for a in (-2, -1, 0, 1, 2, 3) if a != old]
    new = rng.choice(choices)
    lines = source.split("\n")
    row = lines[node.lineno - 1]
    # Offsets are in UTF-8 bytes; the corpus lines are ASCII.
    lines[node.lineno - 1] = row[:node.col_offset] + str(new) + row[node.end_col_offset:]
    return f"line {node.lineno}: {kind} {old} -> {new}", "\n".join(lines)


def grade_mutant(path, work):
    """(ok, description, detail) for the mutant of `path`, or None without a site."""
    made = make_mutant(path)
    if made is None:
        return None
    description, source = made
    stem = os.path.basename(path)[:-3]
    mutant = os.path.join(work, stem + ".py")
    with open(mutant, "w", encoding="utf-8") as f:
        f.write(source)
    options = lib.program_options(mutant)
    module = lib.load_eager_module(mutant)
    raising = {}
    for entry in lib.entry_names(mutant):
        fn = getattr(module, entry)
        sig = lib.signature(fn)
        binding = lib.bindings(sig, options)[0]
        inputs = lib.make_inputs(sig, binding, lib.seed_for(stem, entry, "mutant"), options)
        try:
            fn(**{k: v.copy() for k, v in inputs.items()})
        except Exception as e:  # noqa: BLE001
            raising[entry] = (inputs, f"{type(e).__name__}: {e}")
    graph = os.path.join(work, stem + ".sgraph")
    proc, diags = compile_diagnostics(mutant, graph)
    errors = [d for d in diags if d.severity == "error"]
    if not raising:
        if errors:
            return False, description, f"eager runs, but graph-compile: {errors[0]}"
        return True, description, "eager runs, compiles"
    if errors:
        # A limitation of the compiler does not find the bug; and there is no graph to run.
        real = [d for d in errors if not LIMITATION.search(d.message)]
        if real:
            return True, description, f"compile error: {real[0]}"
        return False, description, f"eager raises ({next(iter(raising.values()))[1]}), graph-compile: {errors[0]}"
    for entry, (inputs, why) in raising.items():
        run, _ = lib.run_graph(graph, entry, inputs, os.path.join(work, f"{stem}_{entry}"))
        if run.returncode != 3:
            return False, description, f"eager raises ({why}) but it compiles and graph-run {lib.describe_result(run)}"
    return True, description, "run-time error (exit 3)"


# ---- the run ---------------------------------------------------------------------

def read_known_gaps():
    gaps = {}
    if os.path.isfile(KNOWN_GAPS):
        with open(KNOWN_GAPS, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, _, reason = line.partition(" ")
                    gaps[name] = reason.strip()
    return gaps


def selected(name):
    wanted = [w.strip() for w in os.environ.get("SG_SHAPE_BUGS", "").split(",") if w.strip()]
    return not wanted or any(name.startswith(w) for w in wanted)


def ratio(a, b):
    return f"{100.0 * a / b:.1f}% ({a}/{b})" if b else "n/a (0/0)"


def print_scores(title, results):
    tp = sum(r.tp for r in results)
    fn = sum(len(r.misses) for r in results)
    fp = sum(len(r.false_alarms) for r in results)
    print(f"{title}: recall {ratio(tp, tp + fn)}, precision {ratio(tp, tp + fp)}")


def describe(result):
    parts = [f"MISS {exp}: {why}" for exp, why in result.misses]
    parts += [f"FALSE ALARM {d}" for d in result.false_alarms]
    if result.corpus_error:
        parts.append(f"CORPUS ERROR {result.corpus_error}")
    return "; ".join(parts)


def main():
    lib.tool_path("graph-compile")
    lib.tool_path("graph-run")
    gaps = read_known_gaps()
    names = sorted(f for f in os.listdir(CORPUS_DIR) if PROGRAM_NAME.match(f))
    buggy = [n for n in names if not n.endswith("_fixed.py")]
    fixed = [n for n in names if n.endswith("_fixed.py")]
    failures, results, seen = [], [], set()
    for n in buggy:
        if n[:-3] + "_fixed.py" not in fixed:
            failures.append(f"{n}: no fixed twin {n[:-3]}_fixed.py")
    for n in fixed:
        if n[:-len("_fixed.py")] + ".py" not in buggy:
            failures.append(f"{n}: no buggy program {n[:-len('_fixed.py')]}.py")

    with tempfile.TemporaryDirectory(prefix="sg_shape_bugs_") as work:
        print("== shape bug corpus ==")
        for n in names:
            name = n[:-3]
            if not selected(name):
                continue
            seen.add(name)
            r = grade_program(os.path.join(CORPUS_DIR, n), n in fixed, work)
            results.append(r)
            status = "PASS" if r.ok else ("KNOWN GAP" if name in gaps and not r.corpus_error else "FAIL")
            shown = describe(r) if not r.ok else "; ".join(str(d) for d in r.found) or "clean"
            print(f"{status:9} {name}  {shown}", flush=True)
            if status == "FAIL":
                failures.append(f"{name}: {describe(r)}")
            elif r.ok and name in gaps:
                failures.append(f"{name}: listed in KNOWN_GAPS.txt but passes now; remove it")

        print("\n== mutants (one per fixed twin and example) ==")
        sources = [os.path.join(CORPUS_DIR, n) for n in fixed]
        sources += sorted(os.path.join(EXAMPLES_DIR, f) for f in os.listdir(EXAMPLES_DIR)
                          if f.endswith(".py") and lib.entry_names(os.path.join(EXAMPLES_DIR, f)))
        mutant_dir = os.path.join(work, "mutants")
        os.makedirs(mutant_dir)
        graded = killed = gap_mutants = 0
        for path in sources:
            name = "mutant:" + os.path.basename(path)[:-3]
            if not selected(os.path.basename(path)):
                continue
            seen.add(name)
            try:
                outcome = grade_mutant(path, mutant_dir)
            except lib.E2EError as e:
                outcome = (False, "?", f"cannot grade: {e}")
            if outcome is None:
                print(f"{'SKIP':9} {name}  (no static dim or axis to mutate)")
                continue
            ok, description, detail = outcome
            graded += 1
            killed += ok
            status = "PASS" if ok else ("KNOWN GAP" if name in gaps else "FAIL")
            gap_mutants += status == "KNOWN GAP"
            print(f"{status:9} {name} [{description}]  {detail}", flush=True)
            if status == "FAIL":
                failures.append(f"{name} [{description}]: {detail}")
            elif ok and name in gaps:
                failures.append(f"{name}: listed in KNOWN_GAPS.txt but passes now; remove it")

    if not os.environ.get("SG_SHAPE_BUGS"):
        for name in sorted(set(gaps) - seen):
            failures.append(f"{name}: listed in KNOWN_GAPS.txt but there is no such program or mutant")

    print()
    print_scores("all programs", results)
    print_scores("without the known gaps", [r for r in results if r.name not in gaps])
    print(f"mutation score: {ratio(killed, graded)}; without the known gaps: "
          f"{ratio(killed, graded - gap_mutants)}")
    gap_count = sum(1 for name in seen if name in gaps)
    print(f"{len(failures)} failure(s), {gap_count} known gap(s)")
    for f in failures:
        print(f"  FAILED {f}")
    return 1 if failures or not results else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lib.E2EError as e:
        print(f"FAIL shape bugs: {e}")
        sys.exit(1)
