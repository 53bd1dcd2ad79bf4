"""The op-coverage cases: for each op of the op table, a generator of one small
staged program per dtype, run end to end against eager mode by test_op_coverage.py.

A generator takes the dtype name ("f32", "f16", "i32", "i64", "bool") and returns
a Program (op_cases_base.py), or None where it has no case for that dtype (the
test then reports the op x dtype as uncovered). Every program's entry takes a
symbolic batch dim N, bound to BINDINGS in turn (size 0 among them), and static
size-0 and size-1 dims; ops that broadcast get broadcast operands, ops with axes
negative axes. The generators live in op_cases_math.py (elementwise, reductions,
matmul, ordering) and op_cases_shape.py (shape ops, creation, NN ops, fused ops).
"""

import op_cases_indexing
import op_cases_linalg
import op_cases_math
import op_cases_shape
from op_cases_base import EXEMPT, FOLDED, KNOWN_ISSUES  # noqa: F401 - the test reads them here

GENERATORS = {**op_cases_math.GENERATORS, **op_cases_shape.GENERATORS, **op_cases_indexing.GENERATORS,
              **op_cases_linalg.GENERATORS}


def program_for(op, dtype):
    """The case of op x dtype, or None where the table has none."""
    gen = GENERATORS.get(op)
    return gen(dtype) if gen else None
