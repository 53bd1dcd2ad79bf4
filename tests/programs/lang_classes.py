"""Classes as model code writes them: a layer object holding its weights,
__init__ and __call__, inheritance with super(), properties, static and class
methods, attributes assigned inside staged branches and loops (also by a method
the loop calls), recursion through a method, and records: collections.namedtuple,
typing.NamedTuple and dataclasses.dataclass.
"""
import collections
import dataclasses
from typing import NamedTuple

import stagegraph as sg

# e2e: N=1,4 range.n=0,6 range.k=-3,3 runs=3

Pair = collections.namedtuple("Pair", ["lo", "hi"])


class State(NamedTuple):
    h: sg.Tensor
    steps: int = 0


@dataclasses.dataclass
class Stats:
    total: sg.Tensor
    count: int = 0
    scale: float = 1.0

    def mean(self):
        return self.total / max(self.count, 1) * self.scale


class Layer:
    """A dense layer: y = x @ w + b, with an activation."""
    activation = "relu"

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        y = x @ self.w + self.b
        return self.act(y)

    def act(self, y):
        return sg.relu(y)

    @property
    def width(self):
        return self.w.shape[1]

    @staticmethod
    def describe(n):
        return n * 2

    @classmethod
    def kind(cls):
        return cls.activation


class TanhLayer(Layer):
    activation = "tanh"

    def __init__(self, w, b, scale):
        super().__init__(w, b)
        self.scale = scale

    def act(self, y):
        return sg.tanh(y) * self.scale


class Counter:
    def __init__(self, start):
        self.total = start
        self.calls = 0

    def add(self, v):
        self.total = self.total + v
        self.calls += 1


class Model:
    def __init__(self, w1, b1, w2, b2):
        self.first = Layer(w1, b1)
        self.second = TanhLayer(w2, b2, 0.5)

    def __call__(self, x):
        return self.second(self.first(x))


@sg.function
def layers(x: sg.f32["N", 3], w1: sg.f32[3, 5], b1: sg.f32[5], w2: sg.f32[5, 2], b2: sg.f32[2]):
    m = Model(w1, b1, w2, b2)
    y = m(x)
    extra = Layer.describe(m.first.width) + len(TanhLayer.kind())
    return y, y.sum() + extra, isinstance(m.second, Layer) and not isinstance(m.first, TanhLayer)


@sg.function
def attribute_in_loop(x: sg.f32["N"], n: sg.i64):
    c = Counter(sg.zeros(()))
    for i in range(n):
        c.add(x.sum() * i)          # a method the staged loop calls rebinds attributes
    return c.total, c.calls


class Accumulator:
    def __init__(self, x):
        self.state = x
        self.best = x.max()

    def run(self, n, k):
        i = 0
        while i < n:
            self.state = self.state * 0.5 + 1.0     # AutoGraph's composite name in a staged loop
            if self.state.sum() > k * 1.0:
                self.best = sg.maximum(self.best, self.state.max())
            i += 1
        return self.state


@sg.function
def composite_names(x: sg.f32["N"], n: sg.i64, k: sg.i64):
    acc = Accumulator(x)
    out = acc.run(n, k)
    return out, acc.best


@sg.function
def attribute_in_branch(x: sg.f32["N"], k: sg.i64):
    c = Counter(x)
    if k > 0:
        c.add(x * 2.0)
    else:
        c.total = c.total - 1.0
    return c.total


@sg.function
def records(x: sg.f32["N"], n: sg.i64):
    p = Pair(x.min(), hi=x.max())
    lo, hi = p
    s = State(x)
    for i in range(n):
        s = State(s.h * 0.5 + p.hi, s.steps + 1)
    st = Stats(x.sum(), count=len(x))
    st.scale = 2.0
    q = p._replace(lo=lo - 1.0)
    return lo + hi + p[1], s.h, s.steps, st.mean(), q.lo, q.hi


class Tree:
    """Recursion through a method: a Call node whose arguments include the
    staged attribute it reads."""

    def __init__(self, w):
        self.w = w

    def depth_sum(self, x, n):
        if n <= 0:
            return x
        return self.depth_sum(x * self.w + 1.0, n - 1)


@sg.function
def recursive_method(x: sg.f32["N"], w: sg.f32["N"], n: sg.i64):
    return Tree(w).depth_sum(x, n)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    print(layers(x, rng.standard_normal((3, 5)).astype(np.float32), np.zeros(5, np.float32),
                 rng.standard_normal((5, 2)).astype(np.float32), np.zeros(2, np.float32)))
    v = np.arange(4, dtype=np.float32)
    print(attribute_in_loop(v, np.int64(3)))
    print(composite_names(v, np.int64(4), np.int64(3)))
    print(attribute_in_branch(v, np.int64(1)))
    print(records(v, np.int64(2)))
    print(recursive_method(v, v * 0.1, np.int64(3)))
