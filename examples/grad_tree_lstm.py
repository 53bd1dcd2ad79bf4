"""The gradient of a TreeLSTM loss with respect to its weights, by recursion.

A binary tree of M nodes is given as child-index arrays: node i has children
left[i] and right[i], or -1 for none (a leaf). `node_state` recurses over the
tree on staged node ids, so the compiled graph holds a recursive graph function
(SPEC §6); sg.value_and_grad differentiates through it, and the gradient is a
recursive graph function too, run on the same frame stack under the same depth
limit (SPEC §11).

    graph-compile examples/grad_tree_lstm.py -o tree_lstm.sgraph
    graph-inspect tree_lstm.sgraph
"""
import stagegraph as sg

D = 8   # input features per node
H = 8   # hidden size


def node_state(i, left, right, xs, cell):
    """(h, c) of node i: a binary TreeLSTM cell over its children's states. `cell`
    is the tuple (W, U_l, U_r, b): a recursive graph function takes tensors and
    tuples of them."""
    W, U_l, U_r, b = cell
    l = sg.take(left, i)
    r = sg.take(right, i)
    x = sg.take(xs, i, axis=0)
    if l < 0:
        h_l = sg.zeros((H,))
        c_l = sg.zeros((H,))
    else:
        h_l, c_l = node_state(l, left, right, xs, cell)
    if r < 0:
        h_r = sg.zeros((H,))
        c_r = sg.zeros((H,))
    else:
        h_r, c_r = node_state(r, left, right, xs, cell)
    gates = x @ W + h_l @ U_l + h_r @ U_r + b
    i_g = sg.sigmoid(gates[0:H])
    f_l = sg.sigmoid(gates[H:2 * H])
    f_r = sg.sigmoid(gates[2 * H:3 * H])
    o_g = sg.sigmoid(gates[3 * H:4 * H])
    u = sg.tanh(gates[4 * H:5 * H])
    c = i_g * u + f_l * c_l + f_r * c_r
    return o_g * sg.tanh(c), c


def loss(params, root, left, right, xs, target):
    cell = (params["W"], params["U_l"], params["U_r"], params["b"])
    h, _ = node_state(root, left, right, xs, cell)
    return sg.nn.mse(sg.dot(h, params["w_out"]), target)


@sg.function
def tree_lstm_grads(root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", D],
                    W: sg.f32[D, 5 * H], U_l: sg.f32[H, 5 * H], U_r: sg.f32[H, 5 * H], b: sg.f32[5 * H],
                    w_out: sg.f32[H], target: sg.f32):
    params = {"W": W, "U_l": U_l, "U_r": U_r, "b": b, "w_out": w_out}
    value, grads = sg.value_and_grad(loss)(params, root, left, right, xs, target)
    return {"loss": value, "grads": grads}


def random_tree(rng, m):
    """Child-index arrays of a random binary tree over nodes 0..m-1, rooted at 0:
    each node after the first hangs under an earlier node with a free slot."""
    import numpy as np
    left = np.full(m, -1, np.int64)
    right = np.full(m, -1, np.int64)
    for k in range(1, m):
        while True:
            p = int(rng.integers(0, k))
            if left[p] < 0:
                left[p] = k
                break
            if right[p] < 0:
                right[p] = k
                break
    return left, right


def example_inputs(seed=0, m=9):
    import numpy as np
    rng = np.random.default_rng(seed)
    left, right = random_tree(rng, m)

    def f32(shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return dict(root=np.array(0, np.int64), left=left, right=right, xs=f32((m, D), 1.0),
                W=f32((D, 5 * H)), U_l=f32((H, 5 * H)), U_r=f32((H, 5 * H)), b=f32((5 * H,)),
                w_out=f32((H,)), target=np.array(0.5, np.float32))


if __name__ == "__main__":
    out = tree_lstm_grads(**example_inputs())
    print("loss", out["loss"])
    for name, g in out["grads"].items():
        print(name, g.shape, float(abs(g).max()))
