"""Benchmark `tree_rnn_grad`: reverse mode through recursion (the adjoint of a
recursive function is recursive). The `tree_rnn` workload (balanced tree of 255 nodes,
hidden 64, the same weights); loss = sum of the root's state; the entry returns it and
the gradients of the six weights (entry inputs, as in a training step).
`tree_rnn_loss` is its forward alone.
"""
import stagegraph as sg

HIDDEN = 64


def encode(i, left, right, xs, p):
    # p: the weights as a tuple (w_leaf, b_leaf, a, b_mat, w, b); a recursive function
    # is a graph function, whose arguments are tensors, numbers and tuples (not dicts).
    w_leaf, b_leaf, a, b_mat, w, b = p
    if left[i] < 0:
        h = sg.tanh(xs[i] @ w_leaf + b_leaf)
    else:
        h_left = encode(left[i], left, right, xs, p)
        h_right = encode(right[i], left, right, xs, p)
        h = sg.tanh(h_left @ a + h_right @ b_mat + xs[i] @ w + b)
    return h


def loss(p, root, left, right, xs):
    weights = (p["w_leaf"], p["b_leaf"], p["a"], p["b_mat"], p["w"], p["b"])
    return sg.sum(encode(root, left, right, xs, weights))


@sg.function
def tree_rnn_grad(root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", HIDDEN],
                  w_leaf: sg.f32[HIDDEN, HIDDEN], b_leaf: sg.f32[HIDDEN], a: sg.f32[HIDDEN, HIDDEN],
                  b_mat: sg.f32[HIDDEN, HIDDEN], w: sg.f32[HIDDEN, HIDDEN], b: sg.f32[HIDDEN]):
    p = {"w_leaf": w_leaf, "b_leaf": b_leaf, "a": a, "b_mat": b_mat, "w": w, "b": b}
    value, grads = sg.value_and_grad(loss)(p, root, left, right, xs)
    return {"loss": value, "grads": grads}   # outputs loss, grads.w_leaf, ...
