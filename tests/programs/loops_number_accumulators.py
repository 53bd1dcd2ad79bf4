"""Loop-carried variables that start as Python numbers (`total = 0`) and meet
tensors of another dtype in the loop: the number takes that dtype, as NumPy 2
(NEP 50) gives it in eager mode's first iteration. Sums over f32, i32 and f16
values, a plain assignment, a comparison, a branch, `where`, nested loops, a
number that stays an int, and numbers that stay numbers through the loop and meet
tensors after it. (Eager mode keeps the Python number where the loop
does not run or the branch is not taken; the graph has one dtype, so the inputs
here run each loop and take each first branch.)
"""
import stagegraph as sg

# e2e: N=1,6 M=1,3 range.n=1,6 runs=4


@sg.function
def sums(x: sg.f32["N"], y: sg.i32["N"], z: sg.f16["N"]):
    s = 0                      # becomes f32
    t = 0                      # becomes i32
    u = 0.0                    # becomes f16
    count = 0                  # stays i64
    for i in range(x.shape[0]):
        s = s + x[i] * 2
        t += y[i]
        u = u + z[i]
        count = count + 1
    return s, t, u, count


@sg.function
def last_and_best(x: sg.f32["N"]):
    last = 0                   # assigned a tensor: f32
    best = -1000               # compared, then chosen by a branch: f32
    hits = 0
    for v in x:
        last = v
        if v > best:
            best = v
            hits = hits + 1
    return last, best, hits


@sg.function
def clipped(x: sg.f32["N"]):
    acc = 0
    for i in range(x.shape[0]):
        acc = sg.where(x[i] > 0, acc + x[i], acc)
    return acc


@sg.function
def nested(m: sg.f32["N", "M"]):
    total = 0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            total = total + m[i, j]
    return total


@sg.function
def half_steps(n: sg.i64):
    # An int that meets a Python float becomes f32.
    h = 0
    i = 0
    while i < n:
        h = h + 0.5
        i = i + 1
    return h


@sg.function
def counters_as_numbers(x: sg.f32["N"], y: sg.i32["N"], m: sg.bool["N"]):
    # A staged counter, enumerate's index and x.shape[0] stand for Python ints:
    # beside a tensor of another dtype they take its dtype at that use (a bool
    # beside one gives i64).
    w = sg.zeros_like(x)
    total = 0
    hits = 0
    for i in range(x.shape[0]):
        w[i] = x[i] * i + x.shape[0]
        total = total + y[i] * i
        hits = hits + (m[i] + i)
    weighted = 0.0
    for k, v in enumerate(x, start=1):
        weighted = weighted + v / k
    j = 0
    scaled = 0.0
    while j < x.shape[0]:
        scaled = scaled + x[j] * j
        j += 1
    return w, total, hits, weighted, scaled, j


@sg.function
def numbers_after_the_loop(x: sg.f32["N"], y: sg.i32["N"]):
    # The loop leaves k and steps Python ints in eager mode (only numbers meet
    # them), so after it they take x's and y's dtypes where they meet them; so does
    # a total that an inner loop counts up. `s` meets x[i] in the loop: f32 there.
    k = 1
    steps = 0
    s = 0
    for i in range(x.shape[0]):
        k = k * 2 + 1
        steps += 1
        s = s + x[i]
    total = 0
    for i in range(x.shape[0]):
        for j in range(i + 1):
            total = total + 1
    return x * k, y + steps, x / (steps + 1), y * total + s.astype(sg.i32), k, total


@sg.function
def counter_arithmetic(x: sg.f32["N"], z: sg.f16["N"]):
    # What a counter makes with numbers stays a Python number in eager mode:
    # -i, abs(i - 2), max(i, 1), i // 2, i % 3, and i + 0.5, a float beside f16.
    s = sg.zeros_like(x)
    h = sg.zeros_like(z)
    for i in range(x.shape[0]):
        s = s + x * max(i, 1) + min(i, 2) + abs(i - 2) - (-i) + x * (i // 2) + i % 3
        h = h + z * (i + 0.5)
    n = x.shape[0]
    return s, h, x / n + (-n) + abs(n - 3)
