"""A binary Tree-LSTM (Tai et al., 2015) over a tree given as child arrays: the
recursion follows the tree, a leaf reads its embedding, an inner node combines its
children's states through input, output and per-child forget gates."""
import stagegraph as sg


def node(i, left, right, leaf_x, w, u, b):
    if left[i] < 0:
        h_l = c_l = h_r = c_r = sg.zeros(8)
        x = leaf_x[i]
    else:
        h_l, c_l = node(left[i], left, right, leaf_x, w, u, b)
        h_r, c_r = node(right[i], left, right, leaf_x, w, u, b)
        x = sg.zeros(8)
    z = x @ w + sg.concatenate([h_l, h_r]) @ u + b             # (5 * 8,)
    i_g, f_l, f_r, o_g, g = z[0:8], z[8:16], z[16:24], z[24:32], z[32:40]
    c = sg.sigmoid(i_g) * sg.tanh(g) + sg.sigmoid(f_l) * c_l + sg.sigmoid(f_r) * c_r
    h = sg.sigmoid(o_g) * sg.tanh(c)
    return h, c


@sg.function
def encode(left: sg.i64["N"], right: sg.i64["N"], leaf_x: sg.f32["N", 8], root: sg.i64,
           w: sg.f32[8, 40], u: sg.f32[16, 40], b: sg.f32[40]):
    h, c = node(root, left, right, leaf_x, w, u, b)
    return h
