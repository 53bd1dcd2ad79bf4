"""Benchmark `beam`: If + While + gather together. Greedy decoding for `steps` steps
(50 in the benchmark) over a vocabulary of 1,000: embed the current token (take), a
tanh cell, logits, argmax. An end-of-sequence token restarts from `start` (a staged
If). Results: the last token, the sum of the chosen logits, and a checksum of the
whole token sequence (exact, so every system must pick the same tokens).
"""
import stagegraph as sg

EOS = 1
HIDDEN = 128
CHECK_MOD = 1000003


@sg.function
def beam(start: sg.i64, steps: sg.i64):
    emb = sg.weight("embedding")   # [1000, 64]
    w = sg.weight("w")             # [64, 128]
    u = sg.weight("u")             # [128, 128]
    b = sg.weight("b")             # [128]
    v = sg.weight("v")             # [128, 1000]
    h = sg.zeros((HIDDEN,))
    tok = start
    score = sg.zeros(())
    check = sg.zeros((), dtype=sg.i64)
    i = sg.zeros((), dtype=sg.i64)
    while i < steps:
        h = sg.tanh(sg.take(emb, tok) @ w + h @ u + b)
        logits = h @ v
        nxt = sg.argmax(logits)
        score = score + sg.max(logits)
        if nxt == EOS:
            nxt = start
        tok = nxt
        check = (check * 31 + tok) % CHECK_MOD
        i = i + 1
    return {"token": tok, "score": score, "check": check}
