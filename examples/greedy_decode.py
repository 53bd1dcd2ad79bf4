"""Greedy decoding with an end token: a tiny recurrent language model picks the
most likely next token until it emits END or reaches the length limit. The
loop's trip count depends on the data, so it is a While node whose test reads
values the body computes; the tokens are a tensor list (SPEC §5).

    PYTHONPATH=compiler/python python3 examples/greedy_decode.py   # eager mode
    graph-compile examples/greedy_decode.py -o decode.sgraph      # a graph file
"""
import stagegraph as sg

VOCAB = 12
HIDDEN = 24
END = 0
MAX_LEN = 32


@sg.function
def greedy_decode(start: sg.i64, emb: sg.f32[VOCAB, HIDDEN], w: sg.f32[HIDDEN, HIDDEN],
                  out: sg.f32[HIDDEN, VOCAB]):
    h = sg.zeros((HIDDEN,))
    token = start
    tokens = [start]
    done = start == END
    while not done and len(tokens) < MAX_LEN:
        h = sg.tanh(emb[token] + h @ w)
        token = sg.argmax(h @ out)
        tokens.append(token)
        done = token == END
    return sg.stack(tokens)


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(3)
    emb = rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) / 5).astype(np.float32)
    out = rng.standard_normal((HIDDEN, VOCAB)).astype(np.float32)
    for start in (1, 4, 7):
        print("start", start, "->", greedy_decode(start=np.array(start), emb=emb, w=w, out=out))
