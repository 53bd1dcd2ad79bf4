"""Nested structures of tensors (SPEC §2, §11): what an entry may return and what
sg.grad differentiates with respect to.

Containers are tuples, named tuples, lists, dicts, dataclass instances and instances
of the program's own classes (their attributes: ``__dict__``, dataclass fields and
``__slots__``); everything else is a leaf. ``tree_map`` rebuilds the same structure:
the same container types, named tuples and dicts by their type, objects as a new
instance of the same class made without calling ``__init__`` (``object.__new__``),
its attributes set to the mapped values.
"""

import copy
import dataclasses
import enum
import functools
import types

# Objects with a __dict__ that are code or constants, not data: never traversed.
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.BuiltinMethodType, functools.partial, enum.Enum)


def _slot_names(cls):
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__"):
                yield name


def object_attributes(x):
    """[(name, value)] of a program object's attributes, or None when x is not one
    (a builtin value, a tensor, an array, a function, a class, stagegraph's own objects)."""
    cls = type(x)
    module = getattr(cls, "__module__", "") or ""
    if isinstance(x, _OPAQUE) or module == "builtins" or module.split(".")[0] in ("stagegraph", "numpy"):
        return None
    names = [f.name for f in dataclasses.fields(x)] if dataclasses.is_dataclass(x) else []
    state = getattr(x, "__dict__", None)
    if state is not None:
        names += [k for k in state if k not in names]
    names += [s for s in _slot_names(cls) if s not in names and hasattr(x, s)]
    if state is None and not names and not dataclasses.is_dataclass(x):
        return None
    return [(n, state[n] if state is not None and n in state else getattr(x, n)) for n in names]


def _new_object(x, items):
    out = object.__new__(type(x))
    for name, value in items:
        object.__setattr__(out, name, value)  # frozen dataclasses too
    return out


def tree_map(fn, tree, path="", visit=None):
    """fn(leaf, path) for every leaf, in order; the same structure rebuilt around the
    results. `path` reads like Python (``[0]['w'].b``); visit(container, path) is
    called for every container before its items."""
    return _map(fn, tree, path, visit, set())


def _map(fn, x, path, visit, active):
    if isinstance(x, (tuple, list, dict)):
        kind = "container"
    else:
        attrs = object_attributes(x)
        if attrs is None:
            return fn(x, path)
        kind = "object"
    if id(x) in active:
        raise TypeError(f"a structure that contains itself (at {path or 'the top'})")
    active.add(id(x))
    try:
        if visit is not None:
            visit(x, path)
        if kind == "object":
            return _new_object(x, [(k, _map(fn, v, f"{path}.{k}", visit, active)) for k, v in attrs])
        cls = type(x)
        if isinstance(x, tuple):
            fields = getattr(cls, "_fields", None)
            if fields is not None:  # a named tuple
                return cls(*(_map(fn, v, f"{path}.{k}", visit, active) for k, v in zip(fields, x)))
            items = [_map(fn, v, f"{path}[{i}]", visit, active) for i, v in enumerate(x)]
            return tuple(items) if cls is tuple else cls(items)
        if isinstance(x, list):
            items = [_map(fn, v, f"{path}[{i}]", visit, active) for i, v in enumerate(x)]
            if cls is list:
                return items
            out = copy.copy(x)
            out[:] = items
            return out
        items = [(k, _map(fn, v, f"{path}[{k!r}]", visit, active)) for k, v in x.items()]
        if cls is dict:
            return dict(items)
        out = copy.copy(x)  # OrderedDict, defaultdict, subclasses: keep their type and settings
        out.clear()
        out.update(items)
        return out
    finally:
        active.discard(id(x))


def leaves(tree):
    """The leaves of `tree` in tree_map's order."""
    out = []
    tree_map(lambda v, _: out.append(v), tree)
    return out


def with_leaves(tree, new_leaves):
    """`tree` with its leaves replaced, in order, by `new_leaves`."""
    it = iter(new_leaves)
    return tree_map(lambda _v, _p: next(it), tree)


def _is_map_leaf(v):
    # sg.tree_map's leaves, as sg.grad takes them: tensors and floats (ints are settings).
    if isinstance(v, (bool, int, str)) or v is None:
        return False
    return isinstance(v, float) or hasattr(v, "dtype") and hasattr(v, "shape")


def map_leaves(fn, tree, *rest):
    """sg.tree_map(fn, tree, *rest) (SPEC §12): fn(leaf, *matching leaves of rest) for
    every tensor or float leaf of `tree`, `tree`'s structure rebuilt around the results;
    other leaves (None, ints, strings) are kept. The structures must match."""
    first = leaves(tree)
    others = [leaves(r) for r in rest]
    for k, other in enumerate(others):
        if len(other) != len(first) or any(_is_map_leaf(a) != _is_map_leaf(b) for a, b in zip(first, other)):
            raise ValueError(f"sg.tree_map: structure {k + 2} does not match the first")
    out = [fn(v, *(o[i] for o in others)) if _is_map_leaf(v) else v for i, v in enumerate(first)]
    return with_leaves(tree, out)
