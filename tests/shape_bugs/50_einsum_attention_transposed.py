"""Attention scores with einsum: the keys are [T, H] but the subscripts read them
as [H, T], so 'd' is 8 in the queries and 6 in the keys."""
import stagegraph as sg


@sg.function
def scores(q: sg.f32[6, 8], k: sg.f32[6, 8]):
    s = sg.einsum("td,ds->ts", q, k)  # expect: error
    return sg.softmax(s / 8.0 ** 0.5, axis=-1)
