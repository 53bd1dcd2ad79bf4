"""`while True:` loops that end by a break or a return whose test is known only at
run time: staged as While nodes whose test is the flags alone. A linear search, a
Collatz count, a loop that returns from inside, and one whose break comes last.
"""
import stagegraph as sg

# e2e: N=1,7 range.n=1,40 range.t=-1,1 runs=4


@sg.function
def first_above(x: sg.f32["N"], t: sg.f32):
    i = 0
    while True:
        if i >= x.shape[0]:
            break
        if x[i] > t:
            break
        i = i + 1
    return i


@sg.function
def collatz(n: sg.i64):
    steps = 0
    while True:
        if n == 1:
            break
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@sg.function
def sum_until_negative(x: sg.f32["N"]):
    total = 0.0
    i = 0
    while True:
        if i == x.shape[0]:
            return total
        if x[i] < 0:
            return -total
        total = total + x[i]
        i += 1


@sg.function
def halve(t: sg.f32):
    v = t * 100.0 + 200.0
    count = 0
    while True:
        v = v / 2
        count += 1
        if v < 1:
            break
    return v, count
