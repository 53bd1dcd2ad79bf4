"""Benchmark `tree_rnn_loss`: the forward of `tree_rnn_grad` alone (the same program
and data, the loss without its gradient), for the backward/forward time ratio."""
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


@sg.function
def tree_rnn_loss(root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", HIDDEN],
                  w_leaf: sg.f32[HIDDEN, HIDDEN], b_leaf: sg.f32[HIDDEN], a: sg.f32[HIDDEN, HIDDEN],
                  b_mat: sg.f32[HIDDEN, HIDDEN], w: sg.f32[HIDDEN, HIDDEN], b: sg.f32[HIDDEN]):
    return {"loss": sg.sum(encode(root, left, right, xs, (w_leaf, b_leaf, a, b_mat, w, b)))}
