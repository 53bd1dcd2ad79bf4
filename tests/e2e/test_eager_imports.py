"""The eager module's imports form no cycle (issue #33): the op modules depend on
_tensor, never the other way round; _tensor reaches the ops its methods and
operators need (x.T, x.sum(), x @ y) through _registry, and _tape reaches the
Tensor class and to_tensor through names _tensor sets.

Every import statement between the package's modules counts, at module level or
inside a function (an import deferred into a function still ties the two modules
together). Each module also imports on its own in a fresh interpreter.

Run by ctest with /usr/bin/python3.
"""
import ast
import os
import subprocess
import sys
import unittest

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compiler", "python")
PACKAGE = "stagegraph"
PACKAGE_DIR = os.path.join(PYTHON_DIR, PACKAGE)


def package_modules():
    """The package's modules by dotted name ("stagegraph._tensor"), with their files."""
    out = {}
    for f in sorted(os.listdir(PACKAGE_DIR)):
        if f.endswith(".py"):
            stem = f[:-3]
            out[PACKAGE if stem == "__init__" else f"{PACKAGE}.{stem}"] = os.path.join(PACKAGE_DIR, f)
    return out


def imports_of(name, path, modules):
    """The package modules that `name`'s file imports anywhere in it, with the lines."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    base = PACKAGE  # every module is directly in the package
    found = {}

    def add(target, line):
        if target in modules and target != name:
            found.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                mod = node.module or ""
            else:
                mod = base + ("." + node.module if node.module else "")
            if mod == PACKAGE:
                # `from . import _tape`: the names are modules where the package has them.
                for alias in node.names:
                    add(f"{PACKAGE}.{alias.name}", node.lineno)
            else:
                add(mod, node.lineno)
    return found


def find_cycle(graph):
    """A cycle of the directed graph as a list of nodes (first == last), or None."""
    state = {}

    def visit(n, path):
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                cycle = visit(m, path)
                if cycle:
                    return cycle
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            cycle = visit(n, [])
            if cycle:
                return cycle
    return None


class ImportGraphTest(unittest.TestCase):
    def test_no_cycle(self):
        modules = package_modules()
        graph = {}
        lines = {}
        for name, path in modules.items():
            if name == PACKAGE:
                continue  # __init__ imports everything it exports; no module imports it
            found = imports_of(name, path, modules)
            graph[name] = set(found)
            for target, line in found.items():
                lines[(name, target)] = line
        cycle = find_cycle(graph)
        if cycle:
            steps = [f"{a} (line {lines[(a, b)]}) imports {b}" for a, b in zip(cycle, cycle[1:])]
            self.fail("import cycle in the eager module:\n  " + "\n  ".join(steps))

    def test_no_module_imports_the_package(self):
        modules = package_modules()
        # optim.py is written in the staged language (it uses `import stagegraph as sg`,
        # as a program does); the package imports it last, after every other module.
        for name, path in modules.items():
            if name not in (PACKAGE, PACKAGE + ".optim"):
                self.assertNotIn(PACKAGE, imports_of(name, path, modules), name)

    def test_checker_finds_a_cycle(self):
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}))

    def test_each_module_imports_alone(self):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        for name in package_modules():
            with self.subTest(module=name):
                r = subprocess.run([sys.executable, "-c", f"import {name}"], env=env, capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
