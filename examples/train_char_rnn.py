"""Backpropagation through sequences of varying length (SPEC §11, §12): a character
RNN (a GRU cell, hidden size H) learns to predict the next character of
examples/data/alice.txt, the opening of Chapter I of Lewis Carroll's "Alice's
Adventures in Wonderland" (1865, in the public domain), with Adam.

Each step trains on a batch of B text windows of one length, `length` characters
(LENGTHS, drawn per step), padded to T_MAX + 1 characters: `chars[:, t]` predicts
`chars[:, t + 1]` for t < length. The loop over t runs `length` times, a number known
only at run time, so it is a staged While, and sg.value_and_grad differentiates it by
a reversed While over the steps it took. Text is lower-cased onto the ALPHABET.

    graph-compile examples/train_char_rnn.py -o char_rnn.sgraph
    python3 examples/train_char_rnn.py --write-data DIR   # DIR/chars.npy, length.npy, ...
    graph-run char_rnn.sgraph --entry train_step --steps 400 --print-every 50 \
        --input chars=DIR/chars.npy --input length=DIR/length.npy --save-variables rnn.safetensors
    graph-run char_rnn.sgraph --entry evaluate --steps 20 --load-variables rnn.safetensors \
        --input chars=DIR/test_chars.npy --input length=DIR/test_length.npy

Run as a script with no arguments, it trains in eager mode and prints the loss.
"""
import stagegraph as sg
from stagegraph import optim

# e2e: range.chars=0,39 range.length=1,9

ALPHABET = " abcdefghijklmnopqrstuvwxyz\n.,;:!?'\"-()"   # anything else reads as a space
V = len(ALPHABET)
H = 64                 # hidden size
B = 16                 # windows per step
T_MAX = 48             # the longest window: chars are [B, T_MAX + 1]
LENGTHS = (16, T_MAX)  # each step's length is drawn from this range (both included)
STEPS = 400


def init_params(seed):
    # A fixed spread of values known when the program is compiled (the variables'
    # initial values): sin of a scrambled index, scaled like a Xavier draw.
    def fixed(rows, cols, salt):
        i = sg.reshape(sg.arange(rows * cols, dtype=sg.f32), (rows, cols))
        return sg.sin(i * 12.9898 + salt) * (2.0 / (rows + cols)) ** 0.5 * 1.7

    return {
        "w": fixed(V, 3 * H, seed + 1.0),      # input -> (update, reset, candidate)
        "u": fixed(H, 2 * H, seed + 2.0),      # state -> (update, reset)
        "u_c": fixed(H, H, seed + 3.0),        # reset state -> candidate
        "b": sg.zeros((3 * H,)),
        "out": fixed(H, V, seed + 4.0),
        "b_out": sg.zeros((V,)),
    }


def gru(p, h, x):
    """The next state of each window from its state h [B, H] and characters x [B]."""
    gx = sg.take(p["w"], x, axis=0) + p["b"]
    gh = h @ p["u"]
    z = sg.sigmoid(gx[:, 0:H] + gh[:, 0:H])
    r = sg.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    c = sg.tanh(gx[:, 2 * H:3 * H] + (r * h) @ p["u_c"])
    return (1.0 - z) * h + z * c


def mean_loss(p, chars, length):
    """Mean cross-entropy (nats per character) of predicting chars[:, t + 1] from
    chars[:, :t + 1], over t < length."""
    h = sg.zeros((B, H))
    total = sg.zeros(())
    for t in range(length):
        h = gru(p, h, sg.take(chars, t, axis=1))
        logits = h @ p["out"] + p["b_out"]
        total = total + sg.nn.cross_entropy(logits, sg.take(chars, t + 1, axis=1))
    return total / sg.astype(length, sg.f32)


opt = optim.adam(lr=optim.cosine_decay(0.01, decay_steps=STEPS, alpha=0.1))
params = init_params(0)
state = sg.variables(params=params, opt=opt.init(params))


@sg.function
def train_step(chars: sg.i64[B, T_MAX + 1], length: sg.i64):
    loss, g = sg.value_and_grad(lambda p: mean_loss(p, chars, length))(state.params)
    state.params, state.opt = opt.update(state.params, optim.clip_by_global_norm(g, 1.0), state.opt)
    return loss


@sg.function
def evaluate(chars: sg.i64[B, T_MAX + 1], length: sg.i64):
    return mean_loss(state.params, chars, length)


# ---- data: windows of the text, drawn with a fixed seed ------------------------------

def text_ids():
    """The text as indices into ALPHABET."""
    import pathlib
    import numpy as np
    text = (pathlib.Path(__file__).resolve().parent / "data" / "alice.txt").read_text(encoding="ascii").lower()
    return np.array([max(ALPHABET.find(ch), 0) for ch in text], np.int64)


def dataset():
    """(train, test): the first 90% of the text and the rest, as indices."""
    ids = text_ids()
    cut = len(ids) * 9 // 10
    return ids[:cut], ids[cut:]


def batches(ids, steps, seed=1):
    """chars [steps, B, T_MAX + 1] (windows of ids, zero past each step's length + 1)
    and length [steps]."""
    import numpy as np
    rng = np.random.default_rng(seed)
    chars = np.zeros((steps, B, T_MAX + 1), np.int64)
    length = rng.integers(LENGTHS[0], LENGTHS[1] + 1, size=steps).astype(np.int64)
    for s in range(steps):
        n = int(length[s])
        for k, start in enumerate(rng.integers(0, len(ids) - n, size=B)):
            chars[s, k, :n + 1] = ids[start:start + n + 1]
    return chars, length


if __name__ == "__main__":
    import os
    import sys
    import numpy as np
    train, test = dataset()
    chars, length = batches(train, STEPS)
    test_chars, test_length = batches(test, 20, seed=2)
    if len(sys.argv) == 3 and sys.argv[1] == "--write-data":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name, value in (("chars", chars), ("length", length), ("test_chars", test_chars),
                            ("test_length", test_length)):
            np.save(os.path.join(sys.argv[2], name + ".npy"), value)
        sys.exit(0)
    for step in range(STEPS):
        loss = train_step(chars[step], length[step])
        if step % 100 == 0:
            print(f"step {step}: loss {float(np.asarray(loss)):.4f} nats/char")
    held_out = np.mean([float(np.asarray(evaluate(test_chars[i], test_length[i]))) for i in range(20)])
    print(f"held-out loss {held_out:.4f} nats/char")
