"""Sequence to sequence with attention and beam search: an RNN encoder, a decoder
that attends over the encoder's states, and a beam of 3 hypotheses extended by
the best total log-probabilities at each step."""
import stagegraph as sg


@sg.function
def translate(src: sg.i64["S"], emb: sg.f32[40, 16], w_enc: sg.f32[32, 16], w_dec: sg.f32[32, 16],
              w_out: sg.f32[16, 40], max_len: sg.i64):
    vocab = emb.shape[0]
    beam = 3
    h = sg.zeros(16)
    states = []
    for t in range(src.shape[0]):
        h = sg.tanh(sg.concatenate([emb[src[t]], h]) @ w_enc)
        states.append(h)
    enc = sg.stack(states)                                     # (S, 16)
    hs = sg.stack([h] * beam)                                  # (beam, 16)
    scores = sg.concatenate([sg.zeros(1), sg.full((beam - 1,), -1e9)])
    tokens = sg.zeros((beam, 0), dtype=sg.i64)
    last = sg.zeros(beam, dtype=sg.i64)                        # 0 starts every sentence
    for _ in range(max_len):
        hs = sg.tanh(sg.concatenate([emb[last], hs], axis=1) @ w_dec)
        att = sg.softmax(hs @ enc.T, axis=1)                   # (beam, S)
        logp = sg.log_softmax((hs + att @ enc) @ w_out, axis=1)
        total = (scores[:, None] + logp).reshape(-1)
        scores, top = sg.topk(total, beam)
        origin, word = top // vocab, top % vocab
        hs = hs[origin]
        tokens = sg.concatenate([tokens[origin], word[:, None]], axis=1)
        last = word
    return tokens[0], scores[0]
