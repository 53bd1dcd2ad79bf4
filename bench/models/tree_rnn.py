"""Benchmark `tree_rnn`: recursion (a re-entrant Call). A tree RNN over a balanced binary
tree of 255 nodes (node 0 the root; left[i], right[i] the children of node i, -1 at a
leaf), hidden 64: a leaf is tanh(x W_leaf + b_leaf), an inner node
tanh(h_left A + h_right B + x W + b).
"""
import stagegraph as sg

HIDDEN = 64


def encode(i, left, right, xs):
    if left[i] < 0:
        h = sg.tanh(xs[i] @ sg.weight("w_leaf") + sg.weight("b_leaf"))
    else:
        h_left = encode(left[i], left, right, xs)
        h_right = encode(right[i], left, right, xs)
        h = sg.tanh(h_left @ sg.weight("a") + h_right @ sg.weight("b_mat")
                    + xs[i] @ sg.weight("w") + sg.weight("b"))
    return h


@sg.function
def tree_rnn(root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", HIDDEN]) -> sg.f32[HIDDEN]:
    return encode(root, left, right, xs)
