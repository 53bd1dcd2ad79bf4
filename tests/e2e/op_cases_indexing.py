"""Op-coverage cases of the ops indexing with a tensor lowers to (see op_cases.py):
scatter (item assignment through indices or a mask) and flat_nonzero (boolean
selection, a length known only at run time)."""

from op_cases_base import Program, scalar_literal

_PARAMS = "a: sg.{t}['N', 6], b: sg.{t}[3], i: sg.i64[3], m: sg.bool['N', 6], k: sg.bool[6]"


def _scatter(t):
    return Program(_PARAMS.format(t=t), f"""
        cols = a[:]                    # a new tensor: the assignments below rebind it only
        cols[:, i] = b                 # repeated indices: the last one wins, as NumPy's
        row = b[:]
        row[i[:2] % 3] = {scalar_literal(t)}
        masked = a[:]
        masked[:, k] = a[:, 0:1]       # a column broadcast into the selected ones
        return {{"cols": cols, "row": row, "masked": masked}}
        """, "range.i=-6,6", ops={"scatter"})


def _flat_nonzero(t):
    return Program(_PARAMS.format(t=t), """
        rows, cols = sg.nonzero(a)
        return {"flat": sg.flatnonzero(a), "rows": rows, "cols": cols, "selected": a[m],
                "compress": sg.compress(k, a, axis=1), "count": len(a[m])}
        """, ops={"flat_nonzero"})


GENERATORS = {"scatter": _scatter, "flat_nonzero": _flat_nonzero}
