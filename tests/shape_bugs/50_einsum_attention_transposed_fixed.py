"""Attention scores with einsum, keys read as [T, H]: 'sd' contracts H."""
import stagegraph as sg

# expect: clean


@sg.function
def scores(q: sg.f32[6, 8], k: sg.f32[6, 8]):
    s = sg.einsum("td,sd->ts", q, k)
    return sg.softmax(s / 8.0 ** 0.5, axis=-1)
