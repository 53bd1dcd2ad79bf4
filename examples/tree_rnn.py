"""A tree RNN (recursive neural network) over a parse-tree-like structure.

Node i of a tree of M nodes has children left[i] and right[i] (-1 at a leaf). A
leaf's state is tanh(x W_leaf); an inner node's is tanh([h_left, h_right, x] W):
the two child states and the node's own features, concatenated. `encode` calls
itself on node ids known only at run time, so graph-compile makes it a graph
function that calls itself through Call nodes (SPEC.md §6), and infers its
result type from the leaf path, the one that returns without recursing. The
runtime gives each activation its own frame on a heap frame stack, bounded by
`graph-run --max-depth`.

    PYTHONPATH=compiler/python python3 examples/tree_rnn.py     # eager mode
    graph-compile examples/tree_rnn.py -o tree_rnn.sgraph       # a graph file
"""
import stagegraph as sg

H = 16


def encode(i, left, right, xs, w_leaf, w):
    l = sg.take(left, i)
    if l < 0:
        h = sg.tanh(sg.take(xs, i, axis=0) @ w_leaf)
    else:
        h_left = encode(l, left, right, xs, w_leaf, w)
        h_right = encode(sg.take(right, i), left, right, xs, w_leaf, w)
        h = sg.tanh(sg.concatenate([h_left, h_right, xs[i]]) @ w)
    return h


@sg.function
def tree_rnn(root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", H],
             w_leaf: sg.f32[H, H], w: sg.f32[3 * H, H]):
    return encode(root, left, right, xs, w_leaf, w)


if __name__ == "__main__":
    import numpy as np

    # ((a b) (c (d e))): node 0 is the root; leaves have no children.
    #        0
    #      /   \
    #     1     2
    #    / \   / \
    #   3   4 5   6
    #            / \
    #           7   8
    left = np.array([1, 3, 5, -1, -1, -1, 7, -1, -1], np.int64)
    right = np.array([2, 4, 6, -1, -1, -1, 8, -1, -1], np.int64)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((len(left), H)).astype(np.float32)
    w_leaf = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    w = (rng.standard_normal((3 * H, H)) / np.sqrt(3 * H)).astype(np.float32)
    h = tree_rnn(root=np.array(0, np.int64), left=left, right=right, xs=xs, w_leaf=w_leaf, w=w)
    np.set_printoptions(precision=4, suppress=True)
    print("root state:", h.dtype, h.shape)
    print(h)
    # The subtree at node 2 alone, the same function with another root.
    print("subtree 2:", tree_rnn(root=np.array(2, np.int64), left=left, right=right, xs=xs, w_leaf=w_leaf, w=w))
