"""sg.variables in eager mode (SPEC §12): program-level state that entries read and
assign. As in the compiled program, every read in an entry's run sees the values
the run started with; the assignments (the last one of each variable) take effect
together when the run returns, and a run that raises changes nothing."""

import numpy as np

from . import _tree
from ._tensor import Tensor, from_numpy

_live = []  # the Variables objects of the process: an entry's run commits theirs
_running = [False]  # inside an entry's run (set by _staging.Function)


def _leaf_tensor(v, what):
    if isinstance(v, Tensor):
        return v
    if isinstance(v, bool):
        return from_numpy(np.array(v), what)
    if isinstance(v, int):
        return from_numpy(np.array(v, dtype=np.int64), what)
    if isinstance(v, float):
        return from_numpy(np.array(v, dtype=np.float32), what)
    return from_numpy(np.asarray(v), what)


def _is_state_leaf(v):
    return isinstance(v, (Tensor, np.ndarray, np.generic, bool, int, float))


def _tensors(tree, what):
    return _tree.tree_map(lambda leaf, path: _leaf_tensor(leaf, what + path) if _is_state_leaf(leaf) else leaf, tree)


class Variables:
    """What sg.variables returns: attributes holding structures of tensors."""

    def __init__(self, **initial):
        object.__setattr__(self, "_values", {k: _tensors(v, k) for k, v in initial.items()})
        object.__setattr__(self, "_pending", {})
        _live.append(self)

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"the variables have no attribute '{name}'")
        return values[name]

    def __setattr__(self, name, value):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"the variables have no attribute '{name}'; declare it in sg.variables(...)")
        if not _running[0]:
            raise RuntimeError("variables are assigned in an entry (the initial values are given to sg.variables)")
        old = _tree.leaves(values[name])
        new = _tree.leaves(_tensors(value, name))
        numbers = [isinstance(x, (bool, int, float, np.generic)) for x in _tree.leaves(value) if _is_state_leaf(x)]
        old = [x for x in old if isinstance(x, Tensor)]
        new = [x for x in new if isinstance(x, Tensor)]
        if len(old) != len(new):
            raise ValueError(f"variable '{name}' holds {len(old)} tensors; the value assigned has {len(new)}")
        cast = []
        for o, n, number in zip(old, new, numbers):
            if tuple(o.shape) != tuple(n.shape):
                raise ValueError(f"variable '{name}' holds a tensor of shape {tuple(o.shape)}; "
                                 f"the value assigned has shape {tuple(n.shape)}")
            if not number and (o.dtype.is_float != n.dtype.is_float or o.dtype.is_int != n.dtype.is_int):
                raise TypeError(f"variable '{name}' holds {o.dtype.name}; the value assigned is {n.dtype.name}: "
                                "cast it with astype")
            cast.append(n if n.dtype == o.dtype else n.astype(o.dtype))
        it = iter(cast)
        self._pending[name] = _tree.tree_map(
            lambda leaf, path: next(it) if isinstance(leaf, Tensor) else leaf, values[name])


def variables(**initial):
    """Program-level state (SPEC §12)."""
    return Variables(**initial)


def begin():
    """At the start of an entry's run: assignments are kept aside from now on."""
    _running[0] = True


def commit(ok):
    """At the end of an entry's run: the assignments take effect, or (ok False) none."""
    _running[0] = False
    for v in _live:
        pending = object.__getattribute__(v, "_pending")
        if ok:
            object.__getattribute__(v, "_values").update(pending)
        pending.clear()
