"""An Elman RNN over a sequence whose length T is known only at run time: the
loop over time becomes one While node (SPEC §5), and the hidden states are
collected in a tensor list.

    PYTHONPATH=compiler/python python3 examples/rnn.py       # eager mode
    graph-compile examples/rnn.py -o rnn.sgraph             # a graph file
    graph-compile examples/rnn.py --explain-staging         # why the loop is staged
"""
import stagegraph as sg


@sg.function
def rnn(xs: sg.f32["T", 16], h0: sg.f32[32],
        w: sg.f32[16, 32], u: sg.f32[32, 32], b: sg.f32[32]):
    h = h0
    states = [h0]
    for t in range(xs.shape[0]):  # T is only known at run time -> a While node
        h = sg.tanh(xs[t] @ w + h @ u + b)
        states.append(h)
    return {"last": h, "states": sg.stack(states)}


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((5, 16)).astype(np.float32)
    h0 = np.zeros(32, np.float32)
    w = (rng.standard_normal((16, 32)) / 4).astype(np.float32)
    u = (rng.standard_normal((32, 32)) / 6).astype(np.float32)
    b = np.zeros(32, np.float32)
    out = rnn(xs=xs, h0=h0, w=w, u=u, b=b)
    np.set_printoptions(precision=4, suppress=True)
    print("last hidden state:", out["last"][:6], "...")
    print("states:", out["states"].shape)
