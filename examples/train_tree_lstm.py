"""Training by recursion (SPEC §6, §11, §12): a binary TreeLSTM learns the value of
small arithmetic expressions, one generated tree per step, with Adam.

An expression such as (7 - 2) * (3 + 4) is a binary tree: its leaves are digits and
its internal nodes the operators +, - and *. A tree of up to M nodes is given as
child-index arrays, padded to M: node i holds token tokens[i] (0-9 a digit, 10 '+',
11 '-', 12 '*') and has children left[i] and right[i], or -1 for none (a leaf);
`root` names the root, so every step's tree can have its own shape and size.
`node_state` recurses over the tree on staged node ids: the compiled graph holds a
recursive graph function, and sg.value_and_grad differentiates through it (its
adjoint is a recursive graph function too). The model regresses the expression's
value, scaled by 1/SCALE, from the root's state.

    graph-compile examples/train_tree_lstm.py -o tree_lstm.sgraph
    python3 examples/train_tree_lstm.py --write-data DIR   # DIR/root.npy, left.npy, ...
    graph-run tree_lstm.sgraph --entry train_step --steps 4000 --print-every 500 \
        --input root=DIR/root.npy --input left=DIR/left.npy --input right=DIR/right.npy \
        --input tokens=DIR/tokens.npy --input target=DIR/target.npy

Run as a script with no arguments, it trains in eager mode and prints the loss.
"""
import stagegraph as sg
from stagegraph import optim

MAX_OPS = 4               # operators per expression: 1..MAX_OPS
M = 2 * MAX_OPS + 1       # nodes per tree, padded
VOCAB = 13                # digits 0-9, then + - *
E = 8                     # token embedding size
H = 16                    # hidden size
SCALE = 10.0              # the target is value / SCALE


def init_params(seed):
    # A fixed spread of values known when the program is compiled (the variables'
    # initial values): sin of a scrambled index, scaled like a Xavier draw.
    def fixed(rows, cols, salt):
        i = sg.reshape(sg.arange(rows * cols, dtype=sg.f32), (rows, cols))
        return sg.sin(i * 12.9898 + salt) * (2.0 / (rows + cols)) ** 0.5 * 1.7

    return {
        "emb": fixed(VOCAB, E, seed + 1.0),
        "W": fixed(E, 5 * H, seed + 2.0),
        "U_l": fixed(H, 5 * H, seed + 3.0),
        "U_r": fixed(H, 5 * H, seed + 4.0),
        "b": sg.zeros((5 * H,)),
        "w_out": sg.reshape(fixed(H, 1, seed + 5.0), (H,)),
        "b_out": sg.zeros(()),
    }


def node_state(i, left, right, tokens, cell):
    """(h, c) of node i: a binary TreeLSTM cell over its children's states (zeros for
    a leaf's). `cell` is the tuple (emb, W, U_l, U_r, b): a recursive graph function
    takes tensors and tuples of them."""
    emb, W, U_l, U_r, b = cell
    l = sg.take(left, i)
    r = sg.take(right, i)
    x = sg.take(emb, sg.take(tokens, i), axis=0)
    if l < 0:
        h_l = sg.zeros((H,))
        c_l = sg.zeros((H,))
    else:
        h_l, c_l = node_state(l, left, right, tokens, cell)
    if r < 0:
        h_r = sg.zeros((H,))
        c_r = sg.zeros((H,))
    else:
        h_r, c_r = node_state(r, left, right, tokens, cell)
    gates = x @ W + h_l @ U_l + h_r @ U_r + b
    i_g = sg.sigmoid(gates[0:H])
    f_l = sg.sigmoid(gates[H:2 * H])
    f_r = sg.sigmoid(gates[2 * H:3 * H])
    o_g = sg.sigmoid(gates[3 * H:4 * H])
    u = sg.tanh(gates[4 * H:5 * H])
    c = i_g * u + f_l * c_l + f_r * c_r
    return o_g * sg.tanh(c), c


def value(p, root, left, right, tokens):
    """The predicted value / SCALE of the tree at `root`."""
    cell = (p["emb"], p["W"], p["U_l"], p["U_r"], p["b"])
    h, _ = node_state(root, left, right, tokens, cell)
    return sg.dot(h, p["w_out"]) + p["b_out"]


STEPS = 4000
opt = optim.adam(lr=optim.cosine_decay(0.01, decay_steps=STEPS, alpha=0.1))
params = init_params(0)
state = sg.variables(params=params, opt=opt.init(params))


@sg.function
def train_step(root: sg.i64, left: sg.i64[M], right: sg.i64[M], tokens: sg.i64[M], target: sg.f32):
    loss, g = sg.value_and_grad(lambda p: sg.nn.mse(value(p, root, left, right, tokens), target))(state.params)
    state.params, state.opt = opt.update(state.params, g, state.opt)
    return loss


@sg.function
def predict(root: sg.i64, left: sg.i64[M], right: sg.i64[M], tokens: sg.i64[M]):
    return value(state.params, root, left, right, tokens) * SCALE


# ---- data: random expressions, generated with a fixed seed --------------------------

OPS = "+-*"


def expression(rng, ops):
    """A random expression with `ops` operators, as nested tuples (op, left, right)
    over digits."""
    if ops == 0:
        return int(rng.integers(0, 10))
    k = int(rng.integers(0, ops))          # operators in the left subtree
    return (OPS[int(rng.integers(0, 3))], expression(rng, k), expression(rng, ops - 1 - k))


def evaluate(e):
    if isinstance(e, int):
        return e
    a, b = evaluate(e[1]), evaluate(e[2])
    return a + b if e[0] == "+" else a - b if e[0] == "-" else a * b


def render(e):
    return str(e) if isinstance(e, int) else "(" + render(e[1]) + " " + e[0] + " " + render(e[2]) + ")"


def encode(e):
    """(root, left, right, tokens) of an expression, its nodes numbered in post-order
    (children before parents, so the root is the last node) and padded to M."""
    import numpy as np
    left = np.full(M, -1, np.int64)
    right = np.full(M, -1, np.int64)
    tokens = np.zeros(M, np.int64)

    def visit(node, nodes):
        if isinstance(node, int):
            tokens[nodes] = node
            return nodes, nodes + 1
        a, nodes = visit(node[1], nodes)
        b, nodes = visit(node[2], nodes)
        left[nodes], right[nodes], tokens[nodes] = a, b, 10 + OPS.index(node[0])
        return nodes, nodes + 1

    root, _ = visit(e, 0)
    return np.array(root, np.int64), left, right, tokens


def dataset(n, seed=0):
    """n expressions of 1..MAX_OPS operators whose values lie in [-SCALE*2, SCALE*2]:
    dict of root [n], left/right/tokens [n, M], target [n] (value / SCALE) and the
    expressions' text."""
    import numpy as np
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        e = expression(rng, int(rng.integers(1, MAX_OPS + 1)))
        if abs(evaluate(e)) <= 2 * SCALE:
            rows.append(e)
    encoded = [encode(e) for e in rows]
    return {"root": np.stack([c[0] for c in encoded]), "left": np.stack([c[1] for c in encoded]),
            "right": np.stack([c[2] for c in encoded]), "tokens": np.stack([c[3] for c in encoded]),
            "target": np.array([evaluate(e) / SCALE for e in rows], np.float32),
            "text": [render(e) for e in rows]}


if __name__ == "__main__":
    import os
    import sys
    import numpy as np
    data = dataset(STEPS)
    names = ("root", "left", "right", "tokens", "target")
    if len(sys.argv) == 3 and sys.argv[1] == "--write-data":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name in names:
            np.save(os.path.join(sys.argv[2], name + ".npy"), data[name])
        sys.exit(0)
    for step in range(STEPS):
        loss = train_step(data["root"][step], data["left"][step], data["right"][step], data["tokens"][step],
                          data["target"][step])
        if step % 500 == 0:
            print(f"step {step}: loss {float(np.asarray(loss)):.4f}")
    test = dataset(10, seed=1)
    for k in range(10):
        got = float(np.asarray(predict(test["root"][k], test["left"][k], test["right"][k], test["tokens"][k])))
        print(f"{test['text'][k]} = {test['target'][k] * SCALE:g}, predicted {got:.2f}")
