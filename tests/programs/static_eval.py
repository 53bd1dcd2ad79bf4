"""Work done at compile time: a recursive fib(10) used as a scale, and static loops
unrolled into a list of terms."""
import stagegraph as sg

# e2e: N=1,3 range.x=-0.9,0.9


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def power_terms(x, count):
    terms = []
    p = x
    for k in range(count):
        terms.append(p / (k + 1))
        p = p * x
    return terms


@sg.function
def series(x: sg.f32["N", 4]):
    terms = power_terms(x, 5)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    n = 0
    squashed = x
    while n < 3:
        squashed = sg.tanh(squashed)
        n += 1
    scale = fib(10)                      # 55, computed by the compiler
    return total * scale, sg.stack(terms, axis=-1), squashed / float(scale)


if __name__ == "__main__":
    import numpy as np

    total, terms, squashed = series(x=np.full((2, 4), 0.5, dtype=np.float32))
    print(total, terms.shape, squashed, sep="\n")
