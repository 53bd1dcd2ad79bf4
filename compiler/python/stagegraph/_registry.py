"""The ops that Tensor's methods and operators reach by name (x.T, x.sum(), x @ y,
abs(x), a list of traced tensors stacked): registered here by the op modules that
define them, looked up by _tensor.py when called.

The op modules import _tensor for the Tensor class; _tensor never imports them, so
the modules' imports form no cycle. Importing stagegraph imports every op module,
so each name is registered before any tensor exists. This module imports nothing.
"""

_OPS = {}


def register(**ops):
    """Registers ops under their names in the op library: register(reshape=reshape)."""
    _OPS.update(ops)


def op(name):
    """The op registered under `name`."""
    return _OPS[name]
