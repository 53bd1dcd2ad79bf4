"""Row normalisation for batches of more than 4 rows: `norm` is defined only in
the taken branch of the staged `if` and returned afterwards; for a smaller batch
the read finds it unbound (Python: UnboundLocalError), a run-time error there."""
import stagegraph as sg


@sg.function
def maybe_normalize(x: sg.f32["N", 16]):
    if x.shape[0] > 4:
        norm = sg.sqrt(sg.sum(x * x, axis=1, keepdims=True))
        x = x / norm
    return x, norm  # expect: runtime with N=3
