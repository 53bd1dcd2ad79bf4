"""The recording side of eager-mode differentiation (SPEC §11).

A differentiable op is declared with ``@differentiable("name")``; its VJP rules are
registered with ``defvjp("name", param=rule, ...)`` (stagegraph/_autodiff.py holds the
table). While sg.grad, sg.value_and_grad or sg.vjp runs, their arguments are
*traced*: a Tensor whose ``_t`` slot holds a Trace (the untraced value, the node that
made it, and the trace's level). An op given a traced operand computes on the
untraced values and returns a traced result whose node keeps the op's arguments;
the backward pass walks the nodes from the result to the arguments. Ops given no
traced operand run as they are, so outside sg.grad nothing is recorded.

Levels make nested differentiation (sg.grad of sg.grad) exact: each sg.grad call
opens a new level; an op boxes its result at the highest level among its operands
and computes on the values one level down, which records the op again on the lower
levels. VJP rules are written with the op library, so the backward pass of an inner
level is itself recorded by the outer ones. A traced value that escapes its level
(returned, stored) is read as its untraced value once the level has closed.

A rule is ``rule(g, out, **params) -> cotangent`` for one parameter: ``g`` the
cotangent of the result (a list or tuple of them for ops with several results,
zeros where one was unused), ``out`` the untraced result and ``params`` the op's
bound arguments, untraced at the op's level. A list parameter (``concatenate``'s
tensors) gets a list of cotangents. None means no gradient.
"""

import functools
import inspect
import itertools
import threading

import numpy as np

# Set by _tensor.py once they exist: _tensor imports this module, never the reverse.
Tensor = None
to_tensor = None

RULES = {}
_levels = itertools.count(1)
_state = threading.local()


def defvjp(name, **rules):
    """Registers VJP rules of the op `name`, one per differentiable parameter."""
    RULES.setdefault(name, {}).update(rules)


def _active():
    s = getattr(_state, "active", None)
    if s is None:
        s = _state.active = set()
    return s


class Trace:
    __slots__ = ("inner", "node", "index", "level")

    def __init__(self, inner, node, index, level):
        self.inner, self.node, self.index, self.level = inner, node, index, level


class Node:
    """One recorded op: its name, untraced arguments and result, and the traces of its
    traced arguments: parents[i] = (param, list index or None, parent node, parent
    output index). avals: (shape, NumPy dtype) of each result."""

    __slots__ = ("name", "params", "out", "parents", "avals")

    def __init__(self, name, params, out, parents, avals):
        self.name, self.params, self.out, self.parents, self.avals = name, params, out, parents, avals


class new_level:
    """Context manager: a fresh level, active while the block runs."""

    def __enter__(self):
        self.level = next(_levels)
        _active().add(self.level)
        return self.level

    def __exit__(self, *exc):
        _active().discard(self.level)


def live(x):
    """x without its traces of levels that have closed."""
    active = _active()
    while x._t is not None and x._t.level not in active:
        x = x._t.inner
    return x


def is_traced(x, level=None):
    if not isinstance(x, Tensor) or x._t is None:
        return False
    x = live(x)
    return x._t is not None and (level is None or x._t.level == level)


def box(value, node, index, level):
    """The traced tensor of `value` (untraced at `level`) made by `node`."""
    t = Tensor.__new__(Tensor)
    t._a = value._a
    t._t = Trace(value, node, index, level)
    return t


def unbox(x, level):
    """x one level down if it is traced at `level`, else x (without closed levels)."""
    if not isinstance(x, Tensor) or x._t is None:
        return x
    x = live(x)
    return x._t.inner if x._t is not None and x._t.level == level else x


def leaf(value, level):
    """A new traced input at `level` (the start of a gradient)."""
    return box(value, Node("input", None, value, (), [(value._a.shape, value._a.dtype)]), 0, level)


def _has_trace(values):
    for v in values:
        if isinstance(v, Tensor):
            if v._t is not None:
                return True
        elif isinstance(v, (list, tuple)) and _has_trace(v):
            return True
    return False


def differentiable(name, lists=()):
    """Marks an op whose VJP rules are registered under `name`. `lists` names the
    parameters that take a list of tensors (concatenate's); a list given for any
    other parameter is a tensor written as a list, stacked first."""
    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def op(*args, **kwargs):
            if not getattr(_state, "active", None) or not _has_trace(itertools.chain(args, kwargs.values())):
                return fn(*args, **kwargs)
            return _record(name, op, fn, signature, lists, args, kwargs)
        op.__sg_vjp__ = name
        return op
    return decorate


def _record(name, op, fn, signature, lists, args, kwargs):
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    params = bound.arguments
    for pname, v in params.items():
        if isinstance(v, (list, tuple)) and _has_trace(v):
            if pname not in lists:
                params[pname] = to_tensor(v, what=name)  # stacked, with the items' gradients
            elif any(isinstance(u, (list, tuple)) for u in v):
                like = next((u for u in v if isinstance(u, Tensor)), None)
                params[pname] = type(v)(to_tensor(u, like=like, what=name)
                                        if isinstance(u, (list, tuple)) and _has_trace(u) else u for u in v)
    level = 0
    for v in params.values():
        for u in (v if isinstance(v, (list, tuple)) else (v,)):
            if isinstance(u, Tensor) and u._t is not None:
                u = live(u)
                if u._t is not None:
                    level = max(level, u._t.level)
    if level == 0:  # only traces of closed levels
        return fn(*args, **kwargs)
    parents = []
    for pname, v in params.items():
        if isinstance(v, (list, tuple)) and any(isinstance(u, Tensor) for u in v):
            items = []
            for i, u in enumerate(v):
                if is_traced(u, level):
                    t = live(u)._t
                    parents.append((pname, i, t.node, t.index))
                items.append(unbox(u, level))
            params[pname] = type(v)(items) if type(v) in (list, tuple) else items
        elif isinstance(v, Tensor):
            if is_traced(v, level):
                t = live(v)._t
                parents.append((pname, None, t.node, t.index))
            params[pname] = unbox(v, level)
    out = op(*bound.args, **bound.kwargs)  # records the levels below
    if out is NotImplemented:
        return out
    results = list(out) if isinstance(out, (list, tuple)) else [out]
    avals = [(r._a.shape, r._a.dtype) if isinstance(r, Tensor) else None for r in results]
    node = Node(name, dict(params), out, tuple(parents), avals)
    boxed = [box(r, node, i, level) if isinstance(r, Tensor) and r._a.dtype.kind == "f" else r
             for i, r in enumerate(results)]
    if isinstance(out, (list, tuple)):
        return type(out)(boxed)
    return boxed[0]


# ---- the backward pass ------------------------------------------------------------------

def _to_cotangent(v, aval, what):
    """A rule's result as a Tensor of the parameter's shape and dtype."""
    if not isinstance(v, Tensor):
        v = to_tensor(v, what=what)
    shape, dtype = aval
    if tuple(v._a.shape) != tuple(shape):
        from ._dtypes import describe, from_numpy
        raise TypeError(f"{what}: a cotangent of shape {describe(v.dtype, v.shape)} for a value of "
                        f"shape {describe(from_numpy(dtype), tuple(shape))}")
    if v._a.dtype != dtype:
        v = v.astype(dtype)
    return v


def _order(seeds):
    """The nodes reachable from `seeds`, each after every node that uses it."""
    order, state = [], {}
    for root in seeds:
        if id(root) in state:
            continue
        stack = [(root, iter(root.parents))]
        state[id(root)] = 1
        while stack:
            node, parents = stack[-1]
            for p in parents:
                parent = p[2]
                if id(parent) not in state:
                    state[id(parent)] = 1
                    stack.append((parent, iter(parent.parents)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def _describe(node, pname, index):
    if node.name == "custom":
        return f"custom op '{node.params['op'].name}': its vjp's cotangent of operand {index}"
    return f"the gradient of {node.name} ({pname}{'' if index is None else f'[{index}]'})"


def _zeros(aval):
    return Tensor(np.zeros(aval[0], aval[1]))


def backward(seeds, wanted):
    """Cotangents of the nodes `wanted` (inputs made by `leaf`) given `seeds`, a list
    of (trace, cotangent). Entries of `wanted` nothing reaches get None."""
    cts = {}
    for trace, ct in seeds:
        slots = cts.setdefault(id(trace.node), [None] * len(trace.node.avals))
        slots[trace.index] = ct if slots[trace.index] is None else slots[trace.index] + ct
    wanted_ids = {id(n) for n in wanted}
    found = {}
    for node in _order([t.node for t, _ in seeds]):
        slots = cts.pop(id(node), None)
        if slots is None or all(s is None for s in slots):
            continue
        if id(node) in wanted_ids:
            found[id(node)] = slots[0]
        if not node.parents:
            continue
        if isinstance(node.out, (list, tuple)):
            g = type(node.out)(s if s is not None or a is None or a[1].kind != "f" else _zeros(a)
                               for s, a in zip(slots, node.avals))
        else:
            g = slots[0]
        rules = RULES.get(node.name, {})
        done = {}
        for pname, index, parent, pindex in node.parents:
            if pname not in done:
                rule = rules.get(pname)
                if rule is None:
                    raise TypeError(f"sg.grad: the op '{node.name}' has no gradient with respect to "
                                    f"its argument '{pname}'")
                done[pname] = rule(g, node.out, **node.params)
            r = done[pname]
            if index is not None and r is not None:
                r = r[index]
            if r is None:
                continue
            r = _to_cotangent(r, parent.avals[pindex], _describe(node, pname, index))
            pslots = cts.setdefault(id(parent), [None] * len(parent.avals))
            pslots[pindex] = r if pslots[pindex] is None else pslots[pindex] + r
    return [found.get(id(n)) for n in wanted]
