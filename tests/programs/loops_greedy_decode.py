"""Greedy decoding with an end token: a loop that stops when the argmax is the
end token or the length limit is reached; the tokens go to a tensor list
(SPEC §5)."""
import stagegraph as sg

# e2e: scale.emb=1.0 scale.w=0.7 range.start=0,6 runs=4

END = 5


@sg.function
def decode(start: sg.i64, emb: sg.f32[6, 8], w: sg.f32[8, 6]):
    token = start
    tokens = [start]
    steps = 0
    done = token == END
    while not done and steps < 12:
        logits = emb[token] @ w
        token = sg.argmax(logits)
        tokens.append(token)
        steps += 1
        done = token == END
    return sg.stack(tokens), steps


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(1)
    print(decode(start=np.array(0), emb=rng.standard_normal((6, 8)).astype(np.float32),
                 w=rng.standard_normal((8, 6)).astype(np.float32)))
