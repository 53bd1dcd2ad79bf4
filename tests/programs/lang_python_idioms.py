"""Python as people write it: `import math` on static numbers and on staged
scalars, generator expressions and dict comprehensions, `*args`/`**kwargs` in
definitions and calls, `sorted` and `min`/`max` with `key=`, and an entry that
returns a named tuple (outputs named by field).
"""
import collections
import dataclasses
import math

import stagegraph as sg

# e2e: N=1,5 runs=3

HIDDEN = 4
SCALE = 1.0 / math.sqrt(HIDDEN)  # 0.5, folded at compile time
WINDOW = math.ceil(math.log2(10))  # 4: an int, as in Python

Stats = collections.namedtuple("Stats", ("mean", "spread"))


@dataclasses.dataclass
class Summary:
    total: sg.f32
    peak: sg.f32


def weighted(*terms, scale=1.0, **named):
    total = sum(t for t in terms) * scale
    for key in sorted(named):
        total = total + named[key]
    return total


def apply(fn, *args, **kwargs):
    return fn(*args, **kwargs)


@sg.function
def math_functions(x: sg.f32["N"], s: sg.f32):
    t = sg.abs(s) + 0.5
    static = math.pi * math.e + math.exp(1.0) - math.log(100, 10) + math.hypot(3, 4) + math.degrees(math.pi / 2)
    staged = math.sqrt(t) + math.exp(-t) + math.log(t) + math.sin(t) * math.cos(t) + math.tanh(t)
    more = math.log2(t) + math.log10(t) + math.log1p(t) + math.expm1(-t) + math.pow(t, 1.5) + math.hypot(t, 2.0)
    flags = sg.where(math.isfinite(t), 1.0, 0.0) + sg.where(math.isnan(t), 1.0, 0.0) + sg.where(math.isinf(t), 1.0, 0.0)
    return x * SCALE + static, staged + more + flags, math.floor(t * 3.0) + WINDOW, x * math.inf > 0.0


@sg.function
def comprehensions(x: sg.f32["N"], w: sg.f32[3]):
    parts = tuple(x * (i + 1) for i in range(3))
    total = sum(p.sum() for p in parts)
    by_name = {f"p{i}": p * w[i] for i, p in enumerate(parts) if i != 1}
    pairs = dict((k, v + 1.0) for k, v in by_name.items())
    any_big = any(v > 2 for v in (1, 2, 3))
    return total, sg.stack(list(pairs.values())).sum(axis=0), by_name, any_big


@sg.function
def star_args(x: sg.f32["N"], y: sg.f32["N"]):
    terms = (x, y, x * y)
    a = weighted(*terms, scale=0.5, bias=1.0, other=y)
    b = apply(weighted, x, y, scale=2.0)
    options = {"scale": 3.0}
    c = weighted(*[x, x], **options)
    pick = lambda *vs, **kw: vs[kw.get("i", 0)] if False else vs[-1]  # noqa: E731
    return a, b, c, pick(x, y, i=1)


@sg.function
def ordering(x: sg.f32["N"]):
    sizes = {"small": 1, "large": 3, "medium": 2}
    names = sorted(sizes, key=lambda k: sizes[k], reverse=True)
    largest = max(sizes, key=sizes.get)
    shortest = min(names, key=len)
    scales = [sizes[n] for n in sorted(names)]
    out = x
    for s in sorted([3, 1, 2]) + scales:
        out = out * 0.5 + s
    pairs = sorted([(2, "b"), (1, "z"), (2, "a")])
    weight = max([-4, 3, -1], key=abs) + min(5, 2, 7) + max([], default=10)
    return out + weight + len(largest) + len(shortest) + pairs[0][0]


@sg.function
def named_result(x: sg.f32["N"]):
    return Stats(mean=x.mean(), spread=x.max() - x.min())


@sg.function
def dataclass_result(x: sg.f32["N"]):
    return Summary(total=x.sum(), peak=x.max())
