"""A tree RNN over a child-index array (SPEC §6): node i of M has its left child
at i+1 and its right child at i+1+offset[i]; a node whose right child would be
past the end is a leaf (children ids grow, so the recursion ends; subtrees may
be shared). `encode` recurses on staged node ids, reads the children with
sg.take and combines the children's states with sg.concatenate. It has no
return annotation: its result type comes from the leaf path, the one that
returns without recursing."""
import stagegraph as sg

# e2e: M=1,6,11 range.root=0,1 range.offset=1,4 scale.w=0.4 scale.w_leaf=0.5 runs=2

H = 8


def encode(i, offset, xs, w_leaf, w):
    left = i + 1
    right = left + sg.take(offset, i)
    if right >= xs.shape[0]:
        h = sg.tanh(sg.take(xs, i, axis=0) @ w_leaf)
    else:
        h_left = encode(left, offset, xs, w_leaf, w)
        h_right = encode(right, offset, xs, w_leaf, w)
        h = sg.tanh(sg.concatenate([h_left, h_right, xs[i]]) @ w)
    return h


@sg.function
def tree_rnn(root: sg.i64, offset: sg.i64["M"], xs: sg.f32["M", H], w_leaf: sg.f32[H, H], w: sg.f32[3 * H, H]):
    return encode(root, offset, xs, w_leaf, w)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)
    print(tree_rnn(root=np.array(0, np.int64), offset=rng.integers(1, 4, 9), xs=rng.standard_normal((9, H)).astype(np.float32),
                   w_leaf=rng.standard_normal((H, H)).astype(np.float32) * 0.5,
                   w=rng.standard_normal((3 * H, H)).astype(np.float32) * 0.4))
