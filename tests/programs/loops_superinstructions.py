"""Loops whose register program runs the scalar ops itself (superinstructions,
runtime/src/executor_registers.cc): every op and dtype it covers, a comparison
of each dtype as the loop's test, results written straight into their carried
register and read again later in the same iteration, a carried value read after
its successor is made, bool logic, and a decoding loop whose hidden state and
logits live in the register file.
"""
import stagegraph as sg

# e2e: range.n=0,60 range.k=-50,50 range.x=-4,4 runs=5


@sg.function
def arithmetic(n: sg.i64, k: sg.i32, x: sg.f32):
    i = sg.zeros((), dtype=sg.i64)
    a = sg.astype(k, sg.i32)
    b = sg.astype(k, sg.i64) * 3
    f = x
    g = x * 0.5
    while i < n:
        i = i + 1
        a = sg.maximum(a * 3 - 7, a + 1)          # i32 mul, sub, add, maximum
        a = sg.minimum(a, 1000000) - sg.astype(i, sg.i32)
        b = b * 6364136223846793005 + 1442695040888963407  # i64 wraps
        f = sg.maximum(f, g) * 0.75 + sg.astype(i, sg.f32) / 8.0  # reads the new i
        g = sg.minimum(g - f / 3.0, f)            # reads the new f
    return a, b, f, g, i


@sg.function
def comparisons(n: sg.i64, k: sg.i32, x: sg.f32):
    # Each dtype's comparison as the loop test, and comparisons as values.
    c32 = sg.zeros((), dtype=sg.i32)
    while c32 <= k:
        c32 = c32 + 3
    fx = x
    steps = sg.zeros((), dtype=sg.i64)
    while fx > -5.0:
        fx = fx - 0.75
        steps = steps + 1
    j = n
    flips = sg.zeros((), dtype=sg.i64)
    while j != 0:
        j = j - 1
        flips = sg.where(j >= n // 2, flips + 2, flips - 1)
    return c32, fx, steps, flips


@sg.function
def logic(n: sg.i64):
    i = sg.zeros((), dtype=sg.i64)
    p = sg.zeros((), dtype=sg.bool)
    q = sg.ones((), dtype=sg.bool)
    count = sg.zeros((), dtype=sg.i64)
    while sg.logical_and(i < n, q):
        p = sg.logical_or(p, i == 7)
        q = sg.logical_or(i < 40, sg.logical_and(p, i < 50))
        count = count + sg.astype(sg.logical_and(p, q), sg.i64)
        i = i + 1
    return i, p, q, count


@sg.function
def rotate(n: sg.i64):
    # a, b, c = b, c, a + b: results that are other carried values, with one made.
    a = sg.ones((), dtype=sg.i64)
    b = sg.ones((), dtype=sg.i64) * 2
    c = sg.ones((), dtype=sg.i64) * 3
    i = sg.zeros((), dtype=sg.i64)
    while i < n:
        a, b, c = b, c, a + b
        i = i + 1
    return a, b, c


@sg.function
def decode(n: sg.i64, x: sg.f32):
    # A greedy decoding loop: a 32-float state and 100 logits in registers.
    w = sg.astype(sg.reshape(sg.arange(32 * 100) % 13, (32, 100)), sg.f32) * 0.02 - 0.12
    u = sg.astype(sg.reshape(sg.arange(32 * 32) % 7, (32, 32)), sg.f32) * 0.03 - 0.09
    emb = sg.astype(sg.reshape(sg.arange(100 * 32) % 11, (100, 32)), sg.f32) * 0.05 - 0.25
    h = sg.zeros((32,)) + x
    tok = sg.zeros((), dtype=sg.i64)
    check = sg.zeros((), dtype=sg.i64)
    i = sg.zeros((), dtype=sg.i64)
    while i < n:
        h = sg.tanh(sg.take(emb, tok) + h @ u)
        # The bias term's steps of 10 outweigh h @ w (|h @ w| < 4): the chosen token
        # cannot depend on rounding.
        logits = h @ w + sg.astype((sg.arange(100) * 37 + tok * 11) % 100, sg.f32) * 10.0
        tok = sg.argmax(logits)
        check = (check * 31 + tok) % 1000003
        i = i + 1
    return h, tok, check


if __name__ == "__main__":
    import numpy as np

    n, k, x = np.array(20), np.array(-9, np.int32), np.array(1.5, np.float32)
    print(arithmetic(n=n, k=k, x=x))
    print(comparisons(n=n, k=k, x=x))
    print(logic(n=np.array(60)))
    print(rotate(n=n))
    print(decode(n=n, x=x))
