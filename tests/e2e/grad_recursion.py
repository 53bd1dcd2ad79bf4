"""Gradients of recursion through tapes (SPEC §11), part of e2e.test_grad: a tree with
an If in the recursive function, mutual recursion, a recursive Call in a loop and a loop
in a recursive function against finite differences, and every node's forward run once.
"""

import os
import re

import numpy as np

import e2e_lib as lib

TREE = """
def encode(i, left, right, xs, w, u):
    if left[i] < 0:
        h = sg.tanh(xs[i] @ w)
    else:
        h_left = encode(left[i], left, right, xs, w, u)
        h_right = encode(right[i], left, right, xs, w, u)
        h = sg.tanh(h_left @ u + h_right * 0.5 + xs[i] @ w)
    return h


def loss(w, u, root, left, right, xs):
    return sg.sum(encode(root, left, right, xs, w, u) * 0.5)


@sg.function
def g(w: sg.f32[3, 4], u: sg.f32[4, 4], root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", 3]):
    return sg.grad(loss, argnums=(0, 1))(w, u, root, left, right, xs)
"""

MUTUAL = """
def enc_a(i, left, right, xs, w, u):
    if left[i] < 0:
        return sg.tanh(xs[i] @ w)
    return sg.tanh(enc_b(left[i], left, right, xs, w, u) @ u + enc_b(right[i], left, right, xs, w, u) * 0.5)


def enc_b(i, left, right, xs, w, u):
    if left[i] < 0:
        return sg.sin(xs[i] @ w)
    return sg.sin(enc_a(left[i], left, right, xs, w, u) @ u) * enc_a(right[i], left, right, xs, w, u) + xs[i] @ w


def loss(w, u, root, left, right, xs):
    return sg.sum(enc_a(root, left, right, xs, w, u))


@sg.function
def g(w: sg.f32[3, 4], u: sg.f32[4, 4], root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", 3]):
    return sg.grad(loss, argnums=(0, 1))(w, u, root, left, right, xs)
"""

CALL_IN_LOOP = """
def depth(x, w, n):
    if n <= 0:
        return x
    return depth(sg.tanh(x @ w), w, n - 1) * 0.9


def loss(w, u, xs, n):
    h = sg.zeros((3,))
    for t in range(xs.shape[0]):
        h = depth(h + xs[t], w, n) @ u
    return sg.sum(h)


@sg.function
def g(w: sg.f32[3, 3], u: sg.f32[3, 3], xs: sg.f32["T", 3], n: sg.i64):
    return sg.grad(loss, argnums=(0, 1))(w, u, xs, n)
"""

LOOP_IN_RECURSION = """
def rec(x, w, u, xs, n):
    if n <= 0:
        return x
    h = x
    for t in range(xs.shape[0]):
        h = sg.tanh(h @ w + xs[t])
    return rec(h @ u, w, u, xs, n - 1)


def loss(w, u, xs, n):
    return sg.sum(rec(xs[0], w, u, xs, n))


@sg.function
def g(w: sg.f32[3, 3], u: sg.f32[3, 3], xs: sg.f32["T", 3], n: sg.i64):
    return sg.grad(loss, argnums=(0, 1))(w, u, xs, n)
"""

# A bias (u, a vector) added at every node: its gradient, the sum of the cotangents,
# is kept as rows through the recursion and summed once after it.
TREE_BIAS = """
def encode(i, left, right, xs, w, u):
    if left[i] < 0:
        h = sg.tanh(xs[i] @ w + u)
    else:
        h_left = encode(left[i], left, right, xs, w, u)
        h_right = encode(right[i], left, right, xs, w, u)
        h = sg.tanh(h_left * 0.5 + h_right * 0.25 + xs[i] @ w + u)
    return h


def loss(w, u, root, left, right, xs):
    return sg.sum(encode(root, left, right, xs, w, u) * 0.5)


@sg.function
def g(w: sg.f32[3, 4], u: sg.f32[4], root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", 3]):
    return sg.grad(loss, argnums=(0, 1))(w, u, root, left, right, xs)
"""

# The weights swap places at every level: their transposes (g @ W^T in the backward)
# must not be hoisted out of the recursion as if each parameter held one value.
SWAPPED = """
def rec(x, w, u, n):
    if n <= 0:
        return sg.tanh(x @ w)
    return rec(sg.tanh(x @ u), u, w, n - 1)


def loss(w, u, xs, n):
    return sg.sum(rec(xs[0], w, u, n))


@sg.function
def g(w: sg.f32[3, 3], u: sg.f32[3, 3], xs: sg.f32["T", 3], n: sg.i64):
    return sg.grad(loss, argnums=(0, 1))(w, u, xs, n)
"""

# Nodes with two children, one or none, each kind keeping other values: the backwards
# must read every function's rows in exactly the reverse order of the forwards.
UNEVEN = """
def encode(i, left, right, xs, w, u):
    if left[i] < 0:
        h = sg.tanh(xs[i] @ w)
    elif right[i] < 0:
        h = sg.sin(encode(left[i], left, right, xs, w, u) @ u) + xs[i] @ w
    else:
        a = encode(left[i], left, right, xs, w, u)
        b = encode(right[i], left, right, xs, w, u)
        h = sg.tanh((a @ u) * b + xs[i] @ w)
    return h


def loss(w, u, root, left, right, xs):
    return sg.sum(encode(root, left, right, xs, w, u))


@sg.function
def g(w: sg.f32[3, 4], u: sg.f32[4, 4], root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", 3]):
    return sg.grad(loss, argnums=(0, 1))(w, u, root, left, right, xs)
"""


def balanced_tree(m):
    """Heap order: node i's children are 2i + 1 and 2i + 2; -1 marks a leaf."""
    left = np.array([2 * i + 1 if 2 * i + 2 < m else -1 for i in range(m)], dtype=np.int64)
    right = np.array([2 * i + 2 if 2 * i + 2 < m else -1 for i in range(m)], dtype=np.int64)
    return left, right


def check_recursion_tape(report, work, grad):
    """Recursion differentiated through a tape: a tree with an If in the recursive
    function, uneven trees (nodes with one child), mutual recursion, a recursive Call in a loop and a loop in a recursive
    function, weights that swap places at every level, against finite differences; and
    every node's forward runs once (--profile
    counts one Call per node forward and one backward in the tree's gradient).
    `grad` is test_grad, whose draw, compile_and_run, finite_difference and close it uses."""
    rng = np.random.default_rng(16)
    trees = {}
    for m in (1, 7, 15):
        left, right = balanced_tree(m)
        trees[m] = {"w": grad.draw(rng, (3, 4), "n") * 0.5, "u": grad.draw(rng, (4, 4), "n") * 0.5,
                    "root": np.array(0, dtype=np.int64), "left": left, "right": right,
                    "xs": grad.draw(rng, (m, 3), "n")}
    loops = {"w": grad.draw(rng, (3, 3), "n") * 0.5, "u": grad.draw(rng, (3, 3), "n") * 0.5, "xs": grad.draw(rng, (4, 3), "n")}
    biased = [dict(trees[m], u=grad.draw(rng, (4,), "n") * 0.5) for m in (1, 7, 15)]
    # Node 0 has children 1 and 2, node 1 one child (3), node 4 one child (6); and a
    # chain of one-child nodes.
    uneven = [dict(trees[7], left=np.array([1, 3, 4, -1, 6, -1, -1], dtype=np.int64),
                   right=np.array([2, -1, 5, -1, -1, -1, -1], dtype=np.int64)),
              dict(trees[7], left=np.array([1, 2, 3, 4, 5, 6, -1], dtype=np.int64),
                   right=np.array([-1, -1, 6, -1, -1, -1, -1], dtype=np.int64))]
    cases = [("tree", TREE, [trees[1], trees[7], trees[15]]), ("mutual", MUTUAL, [trees[1], trees[7], trees[15]]),
             ("tree_bias", TREE_BIAS, biased), ("uneven", UNEVEN, uneven),
             ("call_in_loop", CALL_IN_LOOP, [dict(loops, n=np.array(k, dtype=np.int64)) for k in (0, 3)]),
             ("loop_in_recursion", LOOP_IN_RECURSION, [dict(loops, n=np.array(k, dtype=np.int64)) for k in (0, 2)]),
             ("swapped", SWAPPED, [dict(loops, n=np.array(k, dtype=np.int64)) for k in (0, 1, 4)])]
    for name, body, variants in cases:
        for k, inputs in enumerate(variants):
            inputs = {n: v.astype(np.float32) if v.dtype.kind == "f" else v for n, v in inputs.items()}
            outs, module = grad.compile_and_run(report, f"{name}_{k}", grad.HEADER + body, inputs, work)
            if outs is None:
                continue
            for j, first in enumerate(("w", "u")):
                fd = grad.finite_difference(module.loss, inputs, first)
                why = grad.close(outs.get(f"output_{j}"), fd)
                report.check(f"{name} variant {k} d/d{first}", why is None, why)
    graph = os.path.join(work, "tree_0.sgraph")
    kept = []
    for m in (7, 15):
        inputs = {n: v.astype(np.float32) if v.dtype.kind == "f" else v for n, v in trees[m].items()}
        proc, _ = lib.run_graph(graph, "g", inputs, os.path.join(work, f"tree_profile_{m}"), ["--profile"])
        # A Call per node forward, one per node backward, and the entry's call of the gradient.
        found = re.search(r"^\s+call\s+(\d+)\s", proc.stdout, re.M)
        report.check(f"tree M={m}: one forward per node ({found.group(1) if found else '?'} calls)",
                     proc.returncode == 0 and found and int(found.group(1)) == 2 * m + 1,
                     proc.stdout[-800:] + proc.stderr[-300:])
        tapes = re.search(r"gradient tapes.*\n\s+\S+\s+(\d+) bytes", proc.stdout)
        kept.append(int(tapes.group(1)) if tapes else 0)
    report.check("--profile reports the tapes of the recursion, growing with the tree",
                 0 < kept[0] < kept[1], f"bytes kept {kept}")
