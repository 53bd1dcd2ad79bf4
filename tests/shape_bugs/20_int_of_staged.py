"""Keeping the top 10% of scores: with a symbolic N the count is a staged
value, and int() of it is only known at run time."""
import stagegraph as sg


@sg.function
def keep_top_decile(scores: sg.f32["N"]):
    k = int(scores.shape[0] * 0.1)  # expect: error
    values, index = sg.topk(scores, k)
    return values, index
