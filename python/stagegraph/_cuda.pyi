"""Type stubs of stagegraph._cuda (python/src/cuda_module.cc): the runtime's CUDA
device for stagegraph._runtime, in a wheel built with it. Use
program.session(device="cuda") rather than this module."""
from typing import Any

def device(index: int = 0) -> Any:
    """GPU `index` as a capsule for stagegraph._runtime; RuntimeError "no CUDA device: ..."
    without a GPU or driver, ValueError for an index past the GPUs there are."""
    ...

def test_device() -> Any:
    """The runtime's test device, made by this module, as a capsule like device()'s
    (for tests of the hand-over to stagegraph._runtime)."""
    ...
